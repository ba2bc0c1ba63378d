// memberlist_peer: a stand-in for a Loki pod in limitsd's memberlist interop test. It runs
// HashiCorp memberlist (Debian's golang-github-hashicorp-memberlist-dev) configured as dskit
// configures it, over dskit's TCP transport framing, with dskit's KV layer for ring values,
// and keeps its own fake instances in a ring with a heartbeat. Built offline in the test
// (GOPATH mode from /usr/share/gocode). A small HTTP API on 127.0.0.1 lets the test read the
// ring and the members as this peer sees them (one line per entry: space-separated fields,
// easy to read from C++), and change its own entries.
//
// It prints "READY gossip_port=<p> http_port=<p>" once it listens.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/hashicorp/memberlist"
)

func main() {
	name := flag.String("name", "loki-0", "memberlist node name")
	bind := flag.String("bind", "127.0.0.1", "IP to listen on")
	port := flag.Int("port", 0, "gossip port (0: the kernel picks)")
	join := flag.String("join", "", "comma-separated host:port list to join")
	label := flag.String("label", "", "cluster label")
	instances := flag.String("instances", "", "comma-separated ids of this peer's fake ring instances")
	zone := flag.String("zone", "zone-a", "zone of the fake instances")
	key := flag.String("key", "collectors/ingest-limits", "ring key")
	probe := flag.Duration("probe-interval", time.Second, "memberlist ProbeInterval")
	probeTimeout := flag.Duration("probe-timeout", 500*time.Millisecond, "memberlist ProbeTimeout")
	pushPull := flag.Duration("pushpull-interval", 5*time.Second, "memberlist PushPullInterval")
	heartbeat := flag.Duration("heartbeat", time.Second, "heartbeat period of the fake instances")
	compression := flag.Bool("compression", true, "memberlist EnableCompression (dskit's default: on)")
	tlsCert := flag.String("tls-cert-path", "", "dskit memberlist.tls-cert-path: with -tls-key-path, TLS on every connection")
	tlsKey := flag.String("tls-key-path", "", "dskit memberlist.tls-key-path")
	tlsCA := flag.String("tls-ca-path", "", "dskit memberlist.tls-ca-path")
	tlsServerName := flag.String("tls-server-name", "", "dskit memberlist.tls-server-name")
	flag.Parse()
	log.SetFlags(log.Lmicroseconds)

	var tlsConfig *tls.Config
	if *tlsCert != "" {
		c, err := tlsConfigFor(*tlsCert, *tlsKey, *tlsCA, *tlsServerName, false)
		if err != nil {
			log.Fatalf("tls: %v", err)
		}
		tlsConfig = c
	}
	tr, err := newTransport(*bind, *port, *label, tlsConfig)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	var ml *memberlist.Memberlist
	kv := newKV(4, func() int {
		if ml == nil {
			return 1
		}
		return ml.NumMembers()
	})

	// dskit's buildMemberlistConfig over memberlist's LAN defaults.
	cfg := memberlist.DefaultLANConfig()
	cfg.Name = *name
	cfg.Delegate = kv
	cfg.Transport = tr
	cfg.TCPTimeout = 2 * time.Second
	cfg.RetransmitMult = 4
	cfg.PushPullInterval = *pushPull
	cfg.GossipInterval = 200 * time.Millisecond
	cfg.GossipNodes = 3
	cfg.GossipToTheDeadTime = 30 * time.Second
	cfg.DeadNodeReclaimTime = 0
	cfg.EnableCompression = *compression
	cfg.UDPBufferSize = 10 * 1024 * 1024
	cfg.ProbeInterval = *probe
	cfg.ProbeTimeout = *probeTimeout
	cfg.DisableTcpPings = true
	cfg.LogOutput = os.Stderr
	ml, err = memberlist.Create(cfg)
	if err != nil {
		log.Fatalf("memberlist: %v", err)
	}

	var own []string
	if *instances != "" {
		own = strings.Split(*instances, ",")
	}
	beat := func() {
		now := time.Now().Unix()
		kv.Update(*key, func(d *Desc) {
			for _, id := range own {
				in, ok := d.Ingesters[id]
				if !ok {
					in = InstanceDesc{Addr: id + ".loki:9095", Zone: *zone, RegisteredTimestamp: now, ID: id, Tokens: tokensFor(id, 16)}
				}
				in.State = ACTIVE
				in.Timestamp = now
				d.Ingesters[id] = in
			}
		})
	}
	beat()

	if *join != "" {
		go func() {
			// As dskit: retry with backoff until something answers.
			for backoff := 100 * time.Millisecond; ; backoff *= 2 {
				if n, err := ml.Join(strings.Split(*join, ",")); n > 0 {
					return
				} else {
					log.Printf("[WARN] peer: join: %v", err)
				}
				if backoff > 2*time.Second {
					backoff = 2 * time.Second
				}
				time.Sleep(backoff)
			}
		}()
	}

	var updMu sync.Mutex
	mux := http.NewServeMux()
	// GET /ring: "<id> <state> <timestamp> <registered_timestamp> <tokens> <zone> <addr>" per
	// instance (LEFT entries included), sorted by id.
	mux.HandleFunc("/ring", func(w http.ResponseWriter, r *http.Request) {
		d := kv.Get(*key)
		ids := make([]string, 0, len(d.Ingesters))
		for id := range d.Ingesters {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			fmt.Fprintf(w, "%s %s\n", id, instanceLine(d.Ingesters[id]))
		}
	})
	// GET /members: "<name> <state> <incarnation> <addr>" per member, sorted by name.
	mux.HandleFunc("/members", func(w http.ResponseWriter, r *http.Request) {
		for _, m := range members(ml) {
			fmt.Fprintf(w, "%s %s %d %s\n", m.name, m.state, m.incarnation, m.addr)
		}
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		kv.mu.Lock()
		invalid := kv.invalid
		kv.mu.Unlock()
		fmt.Fprintf(w, "label_rejects %d\nbad_packets %d\ninvalid_kv %d\n", atomic.LoadInt64(&tr.labelRejects),
			atomic.LoadInt64(&tr.badPackets), invalid)
	})
	// POST /update?id=..&addr=..&zone=..&tokens=N: changes one of our own entries now.
	mux.HandleFunc("/update", func(w http.ResponseWriter, r *http.Request) {
		updMu.Lock()
		defer updMu.Unlock()
		q := r.URL.Query()
		id := q.Get("id")
		found := false
		for _, o := range own {
			found = found || o == id
		}
		if !found {
			http.Error(w, "not one of this peer's instances", http.StatusBadRequest)
			return
		}
		var result InstanceDesc
		kv.Update(*key, func(d *Desc) {
			in := d.Ingesters[id]
			if a := q.Get("addr"); a != "" {
				in.Addr = a
			}
			if z := q.Get("zone"); z != "" {
				in.Zone = z
			}
			if t := q.Get("tokens"); t != "" {
				n, _ := strconv.Atoi(t)
				in.Tokens = tokensFor(id+"/"+t, n)
			}
			// A fresh timestamp (one second later than anything before) so that the merge
			// on every member takes it.
			ts := time.Now().Unix()
			if ts <= in.Timestamp {
				ts = in.Timestamp + 1
			}
			in.Timestamp = ts
			d.Ingesters[id] = in
			result = in
		})
		fmt.Fprintf(w, "%s %s\n", id, instanceLine(result))
	})
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatalf("http: %v", err)
	}
	go func() { _ = http.Serve(hl, mux) }()
	fmt.Printf("READY gossip_port=%d http_port=%d\n", tr.port(), hl.Addr().(*net.TCPAddr).Port)

	ticker := time.NewTicker(*heartbeat)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	// Stops also when the test (our parent) closes our stdin.
	stdinClosed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stdinClosed)
	}()
	for {
		select {
		case <-ticker.C:
			updMu.Lock()
			beat()
			updMu.Unlock()
		case <-stop:
			_ = ml.Leave(5 * time.Second)
			_ = ml.Shutdown()
			return
		case <-stdinClosed:
			_ = ml.Shutdown()
			return
		}
	}
}

func tokensFor(seed string, n int) []uint32 {
	out := make([]uint32, 0, n)
	for i := 0; len(out) < n; i++ {
		h := fnv.New32a()
		fmt.Fprintf(h, "%s/%d", seed, i)
		out = append(out, h.Sum32())
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func instanceLine(in InstanceDesc) string {
	zone := in.Zone
	if zone == "" {
		zone = "-"
	}
	return fmt.Sprintf("%s %d %d %d %s %s", stateNames[in.State], in.Timestamp, in.RegisteredTimestamp, len(in.Tokens), zone, in.Addr)
}

type member struct {
	name, state, addr string
	incarnation       uint64
}

// members reads memberlist's own member table, states included (memberlist 0.2.2's Members()
// hides dead and left nodes, and its Node.State is not maintained): reflection over the
// unexported fields, under memberlist's own lock. Test-only introspection.
func members(ml *memberlist.Memberlist) []member {
	v := reflect.ValueOf(ml).Elem()
	lock := (*sync.RWMutex)(unsafe.Pointer(v.FieldByName("nodeLock").UnsafeAddr()))
	lock.RLock()
	defer lock.RUnlock()
	nodes := v.FieldByName("nodes")
	states := []string{"alive", "suspect", "dead", "left"}
	var out []member
	for i := 0; i < nodes.Len(); i++ {
		ns := nodes.Index(i).Elem()
		node := ns.FieldByName("Node")
		ip := net.IP(node.FieldByName("Addr").Bytes())
		st := int(ns.FieldByName("State").Int())
		state := "unknown"
		if st >= 0 && st < len(states) {
			state = states[st]
		}
		out = append(out, member{
			name:        node.FieldByName("Name").String(),
			addr:        net.JoinHostPort(ip.String(), strconv.Itoa(int(node.FieldByName("Port").Uint()))),
			state:       state,
			incarnation: ns.FieldByName("Incarnation").Uint(),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

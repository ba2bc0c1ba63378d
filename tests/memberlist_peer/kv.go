// dskit's memberlist KV as a memberlist Delegate, reduced to what the test needs: values of
// codec "ringDesc" merged by dskit's rules, changes gossiped as KeyValuePair user messages
// (own changes first), push-pull carrying the whole store as [u32 BE length][KeyValuePair]...
package main

import (
	"encoding/binary"
	"log"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

const ringCodec = "ringDesc"

type ringBroadcast struct {
	key     string
	content []string
	version uint
	msg     []byte
}

func (r ringBroadcast) Invalidates(old memberlist.Broadcast) bool {
	o, ok := old.(ringBroadcast)
	if !ok || o.key != r.key || r.version < o.version {
		return false
	}
	have := map[string]bool{}
	for _, c := range r.content {
		have[c] = true
	}
	for _, c := range o.content {
		if !have[c] {
			return false
		}
	}
	return true
}
func (r ringBroadcast) Message() []byte { return r.msg }
func (r ringBroadcast) Finished()       {}

type value struct {
	desc    *Desc
	version uint
}

type kvStore struct {
	mu      sync.Mutex
	store   map[string]*value
	local   *memberlist.TransmitLimitedQueue
	gossip  *memberlist.TransmitLimitedQueue
	invalid int64
}

func newKV(retransmit int, numNodes func() int) *kvStore {
	return &kvStore{
		store:  map[string]*value{},
		local:  &memberlist.TransmitLimitedQueue{NumNodes: numNodes, RetransmitMult: retransmit},
		gossip: &memberlist.TransmitLimitedQueue{NumNodes: numNodes, RetransmitMult: retransmit},
	}
}

// merge merges incoming into key's value (REQUIRES: mu held) and returns the change.
func (k *kvStore) merge(key string, incoming *Desc) (*Desc, uint) {
	v := k.store[key]
	if v == nil {
		normalize(incoming)
		if len(incoming.Ingesters) == 0 {
			return nil, 0
		}
		v = &value{desc: incoming}
		k.store[key] = v
		v.version++
		return incoming.Clone(), v.version
	}
	change := v.desc.Merge(incoming)
	v.desc.RemoveTombstones(time.Now().Add(-5 * time.Minute))
	if change == nil {
		return nil, 0
	}
	v.version++
	return change.Clone(), v.version
}

func (k *kvStore) broadcast(key string, change *Desc, version uint, local bool) {
	pair := KeyValuePair{Key: key, Value: EncodeDesc(change), Codec: ringCodec}
	var content []string
	for id := range change.Ingesters {
		content = append(content, id)
	}
	sort.Strings(content)
	b := ringBroadcast{key: key, content: content, version: version, msg: pair.Marshal()}
	if local {
		k.local.QueueBroadcast(b)
	} else {
		k.gossip.QueueBroadcast(b)
	}
}

func (k *kvStore) mergeBytes(key, codec string, data []byte) {
	if codec != ringCodec {
		return // this stand-in knows only rings
	}
	incoming := NewDesc()
	if len(data) > 0 {
		d, err := DecodeDesc(data)
		if err != nil {
			k.mu.Lock()
			k.invalid++
			k.mu.Unlock()
			log.Printf("[WARN] peer: undecodable ring value for %s: %v", key, err)
			return
		}
		incoming = d
	}
	k.mu.Lock()
	change, version := k.merge(key, incoming)
	k.mu.Unlock()
	if change != nil {
		k.broadcast(key, change, version, false)
	}
}

// Update changes our own entries of key (f edits a copy) and gossips what changed.
func (k *kvStore) Update(key string, f func(d *Desc)) {
	k.mu.Lock()
	cur := NewDesc()
	if v := k.store[key]; v != nil {
		cur = v.desc.Clone()
	}
	f(cur)
	change, version := k.merge(key, cur)
	k.mu.Unlock()
	if change != nil {
		k.broadcast(key, change, version, true)
	}
}

func (k *kvStore) Get(key string) *Desc {
	k.mu.Lock()
	defer k.mu.Unlock()
	if v := k.store[key]; v != nil {
		return v.desc.Clone()
	}
	return NewDesc()
}

// --- memberlist.Delegate ---

func (k *kvStore) NodeMeta(limit int) []byte { return nil }

func (k *kvStore) NotifyMsg(msg []byte) {
	pair, err := UnmarshalKeyValuePair(msg)
	if err != nil || pair.Key == "" {
		k.mu.Lock()
		k.invalid++
		k.mu.Unlock()
		return
	}
	k.mergeBytes(pair.Key, pair.Codec, pair.Value)
}

func (k *kvStore) GetBroadcasts(overhead, limit int) [][]byte {
	msgs := k.local.GetBroadcasts(overhead, limit)
	for _, m := range msgs {
		limit -= overhead + len(m)
	}
	if limit > 0 {
		msgs = append(msgs, k.gossip.GetBroadcasts(overhead, limit)...)
	}
	return msgs
}

func (k *kvStore) LocalState(join bool) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []byte
	for key, v := range k.store {
		pair := KeyValuePair{Key: key, Value: EncodeDesc(v.desc), Codec: ringCodec}
		b := pair.Marshal()
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out
}

func (k *kvStore) MergeRemoteState(buf []byte, join bool) {
	for len(buf) >= 4 {
		n := binary.BigEndian.Uint32(buf)
		buf = buf[4:]
		if uint32(len(buf)) < n {
			k.mu.Lock()
			k.invalid++
			k.mu.Unlock()
			return
		}
		pair, err := UnmarshalKeyValuePair(buf[:n])
		buf = buf[n:]
		if err != nil {
			k.mu.Lock()
			k.invalid++
			k.mu.Unlock()
			return
		}
		k.mergeBytes(pair.Key, pair.Codec, pair.Value)
	}
}

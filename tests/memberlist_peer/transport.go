// dskit's TCP transport framing (kv/memberlist/tcp_transport.go), written for this test from
// its format: a packet is one connection [1][len][our host:port][payload][md5(payload)]; a
// stream starts with 2. Debian's memberlist (0.2.2) predates cluster labels, so the label
// header ([244][len][label], first in every packet payload and stream) is added and checked
// here, as newer memberlist versions do in their label-wrapping transport.
package main

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

const (
	framePacket = 1
	frameStream = 2
	labelMsg    = 244
)

type tcpTransport struct {
	label     string
	listener  *net.TCPListener
	packetCh  chan *memberlist.Packet
	streamCh  chan net.Conn
	advertise string
	shutdown  int32
	wg        sync.WaitGroup

	labelRejects int64
	badPackets   int64

	// dskit's memberlist TLS (TCPTransportConfig.TLSEnabled): one config, from the client TLS
	// settings, wraps accepted connections (tls.Server) and dials (tls.Dial). Nil: plain.
	tlsConfig *tls.Config
}

// tlsConfigFor builds the config as dskit's ClientConfig.GetTLSConfig does: the certificate
// for both roles, the CA as RootCAs, the server name, no client-certificate verification.
func tlsConfigFor(certFile, keyFile, caFile, serverName string, insecure bool) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		ServerName:         serverName,
		InsecureSkipVerify: insecure,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil },
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &cert, nil
		},
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("no certificate in " + caFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

func (t *tcpTransport) dial(addr string, timeout time.Duration) (net.Conn, error) {
	if t.tlsConfig != nil {
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", addr, t.tlsConfig)
	}
	return net.DialTimeout("tcp", addr, timeout)
}

func newTransport(bindAddr string, port int, label string, tlsConfig *tls.Config) (*tcpTransport, error) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.ParseIP(bindAddr), Port: port})
	if err != nil {
		return nil, err
	}
	t := &tcpTransport{
		label:     label,
		listener:  ln,
		tlsConfig: tlsConfig,
		packetCh: make(chan *memberlist.Packet, 1024),
		streamCh: make(chan net.Conn, 64),
	}
	t.wg.Add(1)
	go t.accept()
	return t, nil
}

func (t *tcpTransport) port() int { return t.listener.Addr().(*net.TCPAddr).Port }

func (t *tcpTransport) accept() {
	defer t.wg.Done()
	for {
		conn, err := t.listener.Accept()
		if err != nil {
			if atomic.LoadInt32(&t.shutdown) == 1 {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if t.tlsConfig != nil {
			conn = tls.Server(conn, t.tlsConfig)
		}
		go t.handle(conn)
	}
}

// stripLabel removes a label header from the front of buf; ok is false when it does not
// match ours (no header = the empty label).
func (t *tcpTransport) stripLabel(buf []byte) ([]byte, bool) {
	label := ""
	if len(buf) > 0 && buf[0] == labelMsg {
		if len(buf) < 2 || len(buf) < 2+int(buf[1]) || buf[1] == 0 {
			return nil, false
		}
		label = string(buf[2 : 2+int(buf[1])])
		buf = buf[2+int(buf[1]):]
	}
	return buf, label == t.label
}

func (t *tcpTransport) labelHeader() []byte {
	if t.label == "" {
		return nil
	}
	return append([]byte{labelMsg, byte(len(t.label))}, t.label...)
}

type peekedConn struct {
	net.Conn
	r io.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (t *tcpTransport) handle(conn net.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	typ, err := br.ReadByte()
	if err != nil {
		conn.Close()
		return
	}
	switch typ {
	case frameStream:
		first, err := br.Peek(1)
		if err != nil {
			conn.Close()
			return
		}
		label := ""
		if first[0] == labelMsg {
			hdr, err := br.Peek(2)
			if err != nil || hdr[1] == 0 {
				conn.Close()
				return
			}
			full, err := br.Peek(2 + int(hdr[1]))
			if err != nil {
				conn.Close()
				return
			}
			label = string(full[2:])
			_, _ = br.Discard(len(full))
		}
		if label != t.label {
			atomic.AddInt64(&t.labelRejects, 1)
			conn.Close()
			return
		}
		_ = conn.SetReadDeadline(time.Time{})
		t.streamCh <- &peekedConn{Conn: conn, r: br}
	case framePacket:
		defer conn.Close()
		n, err := br.ReadByte()
		if err != nil {
			return
		}
		from := make([]byte, n)
		if _, err := io.ReadFull(br, from); err != nil {
			return
		}
		buf, err := io.ReadAll(br)
		if err != nil || len(buf) < md5.Size {
			atomic.AddInt64(&t.badPackets, 1)
			return
		}
		payload, digest := buf[:len(buf)-md5.Size], buf[len(buf)-md5.Size:]
		sum := md5.Sum(payload)
		if !bytes.Equal(sum[:], digest) {
			atomic.AddInt64(&t.badPackets, 1)
			return
		}
		payload, ok := t.stripLabel(payload)
		if !ok {
			atomic.AddInt64(&t.labelRejects, 1)
			return
		}
		t.packetCh <- &memberlist.Packet{Buf: payload, From: addrString(from), Timestamp: time.Now()}
	default:
		conn.Close()
	}
}

type addrString string

func (a addrString) Network() string { return "tcp" }
func (a addrString) String() string  { return string(a) }

func (t *tcpTransport) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	// As dskit's transport: without an explicit IP, the bound IP and port.
	addr := t.listener.Addr().(*net.TCPAddr)
	advIP := addr.IP
	if ip != "" {
		advIP = net.ParseIP(ip)
	} else {
		port = addr.Port
	}
	t.advertise = net.JoinHostPort(advIP.String(), fmt.Sprint(port))
	return advIP, port, nil
}

func (t *tcpTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	payload := append(t.labelHeader(), b...)
	go func() {
		if err := t.writePacket(payload, addr); err != nil {
			log.Printf("[DEBUG] peer: packet to %s: %v", addr, err)
		}
	}()
	return time.Now(), nil
}

func (t *tcpTransport) writePacket(payload []byte, addr string) error {
	c, err := t.dial(addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var frame bytes.Buffer
	frame.WriteByte(framePacket)
	if len(t.advertise) > 255 {
		return errors.New("address too long")
	}
	frame.WriteByte(byte(len(t.advertise)))
	frame.WriteString(t.advertise)
	frame.Write(payload)
	sum := md5.Sum(payload)
	frame.Write(sum[:])
	_, err = c.Write(frame.Bytes())
	return err
}

func (t *tcpTransport) PacketCh() <-chan *memberlist.Packet { return t.packetCh }

func (t *tcpTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	c, err := t.dial(addr, timeout)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(append([]byte{frameStream}, t.labelHeader()...)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (t *tcpTransport) StreamCh() <-chan net.Conn { return t.streamCh }

func (t *tcpTransport) Shutdown() error {
	atomic.StoreInt32(&t.shutdown, 1)
	err := t.listener.Close()
	t.wg.Wait()
	return err
}

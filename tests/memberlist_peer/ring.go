// A stand-in for a Loki pod in the interop test: dskit's ring value and dskit's KV message,
// encoded from their published field numbers (dskit ring/ring.proto, kv/memberlist/kv.proto)
// with protowire, compressed with snappy as dskit's proto codec does; and dskit's merge rules
// (ring/model.go). Written for this test from those formats; it is not dskit's code.
package main

import (
	"errors"
	"sort"
	"time"

	"github.com/golang/snappy"
	"google.golang.org/protobuf/encoding/protowire"
)

type InstanceState int

const (
	ACTIVE  InstanceState = 0
	LEAVING InstanceState = 1
	PENDING InstanceState = 2
	JOINING InstanceState = 3
	LEFT    InstanceState = 4
)

var stateNames = map[InstanceState]string{ACTIVE: "ACTIVE", LEAVING: "LEAVING", PENDING: "PENDING", JOINING: "JOINING", LEFT: "LEFT"}

type InstanceDesc struct {
	Addr                string
	Timestamp           int64
	State               InstanceState
	Tokens              []uint32
	Zone                string
	RegisteredTimestamp int64
	ID                  string
	ReadOnlyUpdated     int64
	ReadOnly            bool
	Versions            map[uint64]uint64
}

type Desc struct {
	Ingesters map[string]InstanceDesc
}

func NewDesc() *Desc { return &Desc{Ingesters: map[string]InstanceDesc{}} }

func (d *Desc) Clone() *Desc {
	out := NewDesc()
	for k, v := range d.Ingesters {
		v.Tokens = append([]uint32(nil), v.Tokens...)
		out.Ingesters[k] = v
	}
	return out
}

// --- protobuf (proto3) encoding ---

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func encodeInstance(in InstanceDesc) []byte {
	var b []byte
	b = appendString(b, 1, in.Addr)
	b = appendVarint(b, 2, uint64(in.Timestamp))
	b = appendVarint(b, 3, uint64(in.State))
	if len(in.Tokens) > 0 {
		var packed []byte
		for _, t := range in.Tokens {
			packed = protowire.AppendVarint(packed, uint64(t))
		}
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		b = protowire.AppendBytes(b, packed)
	}
	b = appendString(b, 7, in.Zone)
	b = appendVarint(b, 8, uint64(in.RegisteredTimestamp))
	b = appendString(b, 9, in.ID)
	b = appendVarint(b, 10, uint64(in.ReadOnlyUpdated))
	if in.ReadOnly {
		b = appendVarint(b, 11, 1)
	}
	for k, v := range in.Versions {
		var e []byte
		e = appendVarint(e, 1, k)
		e = appendVarint(e, 2, v)
		b = protowire.AppendTag(b, 12, protowire.BytesType)
		b = protowire.AppendBytes(b, e)
	}
	return b
}

func EncodeDesc(d *Desc) []byte {
	ids := make([]string, 0, len(d.Ingesters))
	for id := range d.Ingesters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b []byte
	for _, id := range ids {
		var e []byte
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendString(e, id)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendBytes(e, encodeInstance(d.Ingesters[id]))
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, e)
	}
	return snappy.Encode(nil, b)
}

var errBadProto = errors.New("bad protobuf")

// fields calls f for each field of a message.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errBadProto
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			x, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return errBadProto
			}
			b = b[m:]
			if err := f(num, typ, nil, x); err != nil {
				return err
			}
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return errBadProto
			}
			b = b[m:]
			if err := f(num, typ, v, 0); err != nil {
				return err
			}
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return errBadProto
			}
			b = b[m:]
		}
	}
	return nil
}

func decodeInstance(b []byte) (InstanceDesc, error) {
	var in InstanceDesc
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			in.Addr = string(v)
		case 2:
			in.Timestamp = int64(x)
		case 3:
			in.State = InstanceState(x)
		case 6:
			if typ == protowire.VarintType {
				in.Tokens = append(in.Tokens, uint32(x))
				return nil
			}
			for len(v) > 0 {
				t, m := protowire.ConsumeVarint(v)
				if m < 0 {
					return errBadProto
				}
				in.Tokens = append(in.Tokens, uint32(t))
				v = v[m:]
			}
		case 7:
			in.Zone = string(v)
		case 8:
			in.RegisteredTimestamp = int64(x)
		case 9:
			in.ID = string(v)
		case 10:
			in.ReadOnlyUpdated = int64(x)
		case 11:
			in.ReadOnly = x != 0
		case 12:
			var k, val uint64
			if err := fields(v, func(n protowire.Number, _ protowire.Type, _ []byte, y uint64) error {
				if n == 1 {
					k = y
				} else if n == 2 {
					val = y
				}
				return nil
			}); err != nil {
				return err
			}
			if in.Versions == nil {
				in.Versions = map[uint64]uint64{}
			}
			in.Versions[k] = val
		}
		return nil
	})
	return in, err
}

func DecodeDesc(data []byte) (*Desc, error) {
	raw, err := snappy.Decode(nil, data)
	if err != nil {
		return nil, err
	}
	d := NewDesc()
	err = fields(raw, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		if num != 1 {
			return nil
		}
		var id string
		var in InstanceDesc
		var ierr error
		if err := fields(v, func(n protowire.Number, _ protowire.Type, w []byte, _ uint64) error {
			if n == 1 {
				id = string(w)
			} else if n == 2 {
				in, ierr = decodeInstance(w)
			}
			return nil
		}); err != nil {
			return err
		}
		if ierr != nil {
			return ierr
		}
		d.Ingesters[id] = in
		return nil
	})
	return d, err
}

type KeyValuePair struct {
	Key              string
	Value            []byte
	Codec            string
	Deleted          bool
	UpdateTimeMillis int64
}

func (p KeyValuePair) Marshal() []byte {
	var b []byte
	b = appendString(b, 1, p.Key)
	if len(p.Value) > 0 {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, p.Value)
	}
	b = appendString(b, 3, p.Codec)
	if p.Deleted {
		b = appendVarint(b, 4, 1)
	}
	b = appendVarint(b, 5, uint64(p.UpdateTimeMillis))
	return b
}

func UnmarshalKeyValuePair(b []byte) (KeyValuePair, error) {
	var p KeyValuePair
	err := fields(b, func(num protowire.Number, _ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			p.Key = string(v)
		case 2:
			p.Value = append([]byte(nil), v...)
		case 3:
			p.Codec = string(v)
		case 4:
			p.Deleted = x != 0
		case 5:
			p.UpdateTimeMillis = int64(x)
		}
		return nil
	})
	return p, err
}

// --- dskit's merge rules ---

func normalize(d *Desc) {
	for id, in := range d.Ingesters {
		if in.State == LEFT {
			in.Tokens = nil
		}
		sort.Slice(in.Tokens, func(i, j int) bool { return in.Tokens[i] < in.Tokens[j] })
		out := in.Tokens[:0]
		for i, t := range in.Tokens {
			if i == 0 || t != in.Tokens[i-1] {
				out = append(out, t)
			}
		}
		in.Tokens = out
		d.Ingesters[id] = in
	}
}

// Merge merges other into d (newer timestamp wins; LEFT accepted at an equal timestamp) and
// returns the changed entries, or nil. Token conflicts are not resolved here: the peers'
// fake instances use disjoint tokens.
func (d *Desc) Merge(other *Desc) *Desc {
	normalize(other)
	change := NewDesc()
	for id, o := range other.Ingesters {
		cur, ok := d.Ingesters[id]
		if !ok || o.Timestamp > cur.Timestamp || (o.Timestamp == cur.Timestamp && cur.State != LEFT && o.State == LEFT) {
			if !ok && o.Timestamp == 0 && o.State != LEFT {
				continue
			}
			d.Ingesters[id] = o
			change.Ingesters[id] = o
		}
	}
	if len(change.Ingesters) == 0 {
		return nil
	}
	return change
}

// RemoveTombstones drops LEFT entries older than limit.
func (d *Desc) RemoveTombstones(limit time.Time) {
	for id, in := range d.Ingesters {
		if in.State == LEFT && time.Unix(in.Timestamp, 0).Before(limit) {
			delete(d.Ingesters, id)
		}
	}
}

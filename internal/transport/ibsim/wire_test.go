package ibsim

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/transport"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The CONNECT request strace showed libumad2sim sending for pid 11745 and
// SIM_HOST=h0002 (ibsim-protocol.md §9).
func TestConnectBytes(t *testing.T) {
	var m ctlMsg
	m.Type = ctlConnect
	if err := (&clientInfo{ID: 11745, NodeID: "h0002"}).marshal(&m); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, ctlSize)
	copy(want, unhex(t, `efbeadde 00000000 01000000 2c000000 e12d0000 00000000 00000000 6830303032`))
	if got := m.marshal(); !bytes.Equal(got, want) {
		t.Errorf("CONNECT =\n% x\nwant\n% x", got, want)
	}

	// The reply: same bytes with slot 1 in data[0:4].
	reply := append([]byte(nil), want...)
	copy(reply[16:20], []byte{1, 0, 0, 0})
	var r ctlMsg
	if err := r.unmarshal(reply); err != nil {
		t.Fatal(err)
	}
	var ci clientInfo
	ci.unmarshal(&r)
	if r.Type != ctlConnect || ci.ID != 1 || ci.NodeID != "h0002" || ci.QP != 0 || ci.IsSM != 0 {
		t.Errorf("reply = %+v %+v", r.Type, ci)
	}

	if err := (&clientInfo{NodeID: strings.Repeat("x", 32)}).marshal(&m); err == nil {
		t.Error("a 32-byte node name was accepted; ibsim's field holds 31 and a NUL")
	}
	bad := append([]byte(nil), reply...)
	bad[0] = 0
	if err := r.unmarshal(bad); err == nil {
		t.Error("wrong magic accepted")
	}
	if err := r.unmarshal(reply[:79]); err == nil {
		t.Error("79-byte message accepted")
	}
}

// The PerfMgt ClassPortInfo exchange of ibsim-protocol.md §9.
const (
	perfReqHead = `000b0000 00000000 00000001 00000001 00000000 80000000 00000000 00000100
	               01040101 00000000 00000002 1e7dcf50`
	perfRespHead = `00050000 000b0000 00000001 00000001 00000000 80000000 00000000 00000100
	                01040181 00000000 00010002 1e7dcf50`
)

func TestDataBytes(t *testing.T) {
	head := unhex(t, perfReqHead)
	madBytes := make([]byte, 256)
	copy(madBytes, head[32:])
	b := make([]byte, dataSize)
	marshalData(b, &dataMsg{DLID: 11, DQP: 1, SQP: 1, Length: 256}, madBytes)
	want := append([]byte(nil), head...)
	want[20] = 0 // libumad2sim's padding garbage; we send zeros
	if !bytes.Equal(b[:len(want)], want) || !bytes.Equal(b[len(want):], make([]byte, dataSize-len(want))) {
		t.Errorf("request =\n% x\nwant\n% x", b[:48], want)
	}

	resp := make([]byte, dataSize)
	copy(resp, unhex(t, perfRespHead))
	var p transport.Packet
	if !decodeInto(&p, resp) {
		t.Fatal("reply not decoded")
	}
	want2 := transport.Packet{Addr: transport.Addr{DLID: 11, QP: 1, QKey: transport.GSIQKey}, MAD: resp[32:]}
	if p.Status != 0 || p.Addr != want2.Addr || !bytes.Equal(p.MAD, want2.MAD) {
		t.Errorf("reply = %+v", p)
	}
	// The MAD aliases the message (the reader gives every message its own
	// buffer) but cannot be appended into the spare byte.
	if &p.MAD[0] != &resp[32] || cap(p.MAD) != 256 {
		t.Errorf("MAD at %p cap %d, message MAD at %p", &p.MAD[0], cap(p.MAD), &resp[32])
	}

	// Status 110: the request comes back, addresses not swapped. Every
	// field is overwritten.
	back := make([]byte, dataSize)
	copy(back, head)
	back[19] = 110
	p.Timeout = 1
	decodeInto(&p, back)
	if p.Status != transport.StatusTimedOut || p.Addr.DLID != 11 || p.Addr.QP != 1 || p.Timeout != 0 {
		t.Errorf("status-110 packet = %+v", p)
	}
	for _, n := range []int{0, 287, 289} {
		b := make([]byte, n)
		copy(b, back)
		if decodeInto(&p, b) {
			t.Errorf("%d-byte message decoded", n)
		}
	}
}

func TestSockNames(t *testing.T) {
	for got, want := range map[string]string{
		sockAddr(serverCtlName("ibh3585519942")):         "@ibh3585519942:ctl\x00",
		sockAddr(clientCtlName("ibh3585519942", 11745)):  "@ibh3585519942:ctl11745\x00",
		sockAddr(clientDataName("ibh3585519942", 11745)): "@ibh3585519942:in11745\x00",
		sockAddr(serverDataName("ibh3585519942", 1)):     "@ibh3585519942:out1\x00",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func FuzzDecodePacket(f *testing.F) {
	f.Add(make([]byte, dataSize))
	f.Add(unhex(f, perfRespHead+strings.Repeat("00", dataSize-48)))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := new(transport.Packet)
		ok := decodeInto(p, b)
		if ok != (len(b) == dataSize) {
			t.Fatalf("len %d decoded=%v", len(b), ok)
		}
		if !ok {
			return
		}
		if len(p.MAD) != 256 || (p.Status != 0 && p.Status != transport.StatusTimedOut) {
			t.Fatalf("packet %+v", p)
		}
		// Re-encoding the header and MAD reproduces the message except
		// padding and the status value.
		h, m, _ := unmarshalData(b)
		out := make([]byte, dataSize)
		marshalData(out, &h, m)
		copy(out[20:24], b[20:24])
		copy(out[2:4], b[2:4])
		copy(out[6:8], b[6:8])
		if !bytes.Equal(out, b) {
			t.Fatalf("round trip\n% x\n% x", out[:32], b[:32])
		}
	})
}

func FuzzCtlUnmarshal(f *testing.F) {
	var m ctlMsg
	m.Type = ctlConnect
	(&clientInfo{ID: 1, NodeID: "h0002"}).marshal(&m)
	f.Add(m.marshal())
	f.Add(make([]byte, ctlSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r ctlMsg
		if err := r.unmarshal(b); err != nil {
			return
		}
		if !bytes.Equal(r.marshal(), b) {
			t.Fatal("control message does not round-trip")
		}
		var ci clientInfo
		ci.unmarshal(&r)
		if len(ci.NodeID) >= nodeIDSize || strings.IndexByte(ci.NodeID, 0) >= 0 {
			t.Fatalf("node id %q", ci.NodeID)
		}
	})
}

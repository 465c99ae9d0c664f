package jsondec

import (
	"bytes"
	"encoding/json"
	"testing"
	"unsafe"
)

// sharedPage is shaped as a listing: raw items, raw members, and the
// fields a page decodes as values.
type sharedPage struct {
	Items []json.RawMessage `json:"items"`
	One   json.RawMessage   `json:"one"`
	Next  string            `json:"nextCursor"`
	Deep  struct {
		Raw json.RawMessage `json:"raw"`
	} `json:"deep"`
}

// inside reports whether b's bytes lie inside data's memory.
func inside(b, data []byte) bool {
	if len(b) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(data))
}

// Every raw value is data's own bytes, byte for byte (members in their
// order, whitespace, escapes, invalid UTF-8 kept), capped at its end; the
// rest decodes as Unmarshal decodes it; data is left as it was.
func TestUnmarshalSharedKeepsBytesInPlace(t *testing.T) {
	items := []string{
		`{"z":1,"a":{"y":true,"b":null}}`,
		`{ "name" : "x\u00e9\n" , "_meta":{"k2":1,"k1":2} }`,
		"\"\xff raw\"",
		`null`,
		`[1, 2 ,3]`,
	}
	data := []byte(`{"items":[` + items[0] + `, ` + items[1] + `,` + items[2] + `,` + items[3] + `,` + items[4] + `],"ONE":{"b":1,"a":2},"nextCursor":"c\u0031","deep":{"raw": 7 }}`)
	before := bytes.Clone(data)
	var got sharedPage
	if err := UnmarshalShared(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != len(items) {
		t.Fatalf("%d items, want %d", len(got.Items), len(items))
	}
	for i, it := range got.Items {
		if string(it) != items[i] {
			t.Errorf("item %d = %s, want %s", i, it, items[i])
		}
		if !inside(it, data) || cap(it) != len(it) {
			t.Errorf("item %d: a copy, or room to append over what follows it", i)
		}
	}
	for _, r := range []json.RawMessage{got.One, got.Deep.Raw} {
		if !inside(r, data) {
			t.Errorf("%s: a copy", r)
		}
	}
	var want sharedPage
	if err := Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if !bytes.Equal(wb, gb) {
		t.Errorf("UnmarshalShared gave %s, Unmarshal %s", gb, wb)
	}
	got.Items[0] = append(got.Items[0], '!')
	if !bytes.Equal(data, before) {
		t.Error("the input was modified")
	}
}

// FuzzUnmarshalShared: for any input, UnmarshalShared succeeds and fails
// where Unmarshal does, with the same values, and its raw values are
// slices of the input.
func FuzzUnmarshalShared(f *testing.F) {
	f.Add([]byte(`{"items":[{"b":1,"a":[2]},"x"],"one":null,"nextCursor":"n","deep":{"raw":{}}}`))
	f.Add([]byte(`{"items":[1,],"one":}`))
	f.Add([]byte("{\"Items\":[\"\xff\"],\"one\":1,\"one\":2}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, want sharedPage
		gerr, werr := UnmarshalShared(data, &got), Unmarshal(bytes.Clone(data), &want)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: UnmarshalShared %v, Unmarshal %v", data, gerr, werr)
		}
		if gerr != nil {
			return
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("%q: UnmarshalShared %s, Unmarshal %s", data, gb, wb)
		}
		for _, it := range append(got.Items, got.One, got.Deep.Raw) {
			if len(it) > 0 && !inside(it, data) {
				t.Fatalf("%q: raw value %q copied", data, it)
			}
		}
	})
}

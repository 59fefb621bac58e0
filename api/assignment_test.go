package api

import "testing"

func TestDecodeAssignment(t *testing.T) {
	tests := []struct {
		value   string
		want    Assignment
		wantErr bool
	}{
		{`{"node":"a","revision":12,"templateHash":"abc"}`, Assignment{Node: "a", Revision: 12, TemplateHash: "abc"}, false},
		{`{"node":"b","revision":3,"templateHash":"x","onDelete":true}`, Assignment{Node: "b", Revision: 3, TemplateHash: "x", OnDelete: true}, false},
		{"node-a", Assignment{Node: "node-a"}, false}, // written before assignments carried a revision
		{`{"node":""}`, Assignment{}, true},
		{`{"node":`, Assignment{}, true},
		{"a/b", Assignment{}, true},
	}
	for _, tt := range tests {
		got, err := DecodeAssignment([]byte(tt.value))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("DecodeAssignment(%q) = %+v, %v; want %+v, error %v", tt.value, got, err, tt.want, tt.wantErr)
		}
	}
}

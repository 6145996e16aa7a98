package esl

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseNodes(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		defPW   string
		want    []NodeConfig
		wantErr string
	}{
		{name: "empty", spec: " , ", want: nil},
		{name: "host port default password", spec: "10.0.0.5:8021",
			want: []NodeConfig{{Name: "10.0.0.5:8021", Addr: "10.0.0.5:8021", Password: "ClueCon"}}},
		{name: "given default password", spec: "fs1.example.net:8021", defPW: "s3cret",
			want: []NodeConfig{{Name: "fs1.example.net:8021", Addr: "fs1.example.net:8021", Password: "s3cret"}}},
		{name: "password and several", spec: "pw1@10.0.0.5:8021, 10.0.0.6:8022",
			want: []NodeConfig{
				{Name: "10.0.0.5:8021", Addr: "10.0.0.5:8021", Password: "pw1"},
				{Name: "10.0.0.6:8022", Addr: "10.0.0.6:8022", Password: "ClueCon"},
			}},
		{name: "named with password containing at and equals", spec: "fs1=p@ss=w@10.0.0.5:8021",
			want: []NodeConfig{{Name: "fs1", Addr: "10.0.0.5:8021", Password: "p@ss=w"}}},
		{name: "named without password", spec: "fs2=[::1]:8021",
			want: []NodeConfig{{Name: "fs2", Addr: "[::1]:8021", Password: "ClueCon"}}},
		{name: "missing port", spec: "10.0.0.5", wantErr: "want [name=][password@]host:port"},
		{name: "bad port", spec: "10.0.0.5:99999", wantErr: "bad port"},
		{name: "empty password", spec: "@10.0.0.5:8021", wantErr: "empty password"},
		{name: "duplicate", spec: "10.0.0.5:8021,x@10.0.0.5:8021", wantErr: "duplicate node name"},
		{name: "error hides password", spec: "fs1=topsecret@nohost", wantErr: `"fs1=***@nohost"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNodes(tt.spec, tt.defPW)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "topsecret") {
					t.Errorf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

package command

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// apiVerb matches a string that starts like a FreeSWITCH API command (or
// an event-socket sendevent): the words mod_commands, mod_sofia,
// mod_callcenter, mod_voicemail, mod_local_stream and the core register.
// A bare word (a channel's technology "sofia", a destination type
// "conference") is a name, not a command: a verb must be followed by its
// arguments.
var apiVerb = regexp.MustCompile(`^(uuid_[a-z_]+|originate|sofia|callcenter_config|xml_flush_cache|local_stream|sendevent|global_getvar|show|vm_[a-z_]+|reloadxml|reloadacl|hupall|fsctl|luarun|jsrun|sched_api|limit_[a-z_]+|user_exists|sofia_contact|valet_info|fifo) [a-z0-9_{@$'/-]`)

// TestNoCommandTextOutsideThisPackage: every FreeSWITCH command is built
// here. The pool's API takes a Command, which only this package makes,
// so a command cannot be sent from elsewhere; this test also catches
// command text written elsewhere (to build, log or compare). The fake
// switch (esl/fakefs) is FreeSWITCH's side and parses commands, the load
// generator's wire sniffer (cmd/sbbench) watches what the switch
// receives, and tests may name the lines they expect. The pool's own
// framing ("api ", "bgapi ") is the event socket's, not a command.
func TestNoCommandTextOutsideThisPackage(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs(".")
	skip := []string{self, filepath.Join(root, "internal/freeswitch/esl/fakefs"), filepath.Join(root, "cmd/sbbench"), filepath.Join(root, ".git")}
	scanned := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			for _, s := range skip {
				if path == s {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err == nil && apiVerb.MatchString(v) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: FreeSWITCH command text %q outside internal/freeswitch/command", rel, fset.Position(lit.Pos()).Line, v)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 100 {
		t.Fatalf("scanned only %d files: is the module root %s?", scanned, root)
	}
}

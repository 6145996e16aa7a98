package media

import (
	"encoding/json"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// StreamCommands are the mod_local_stream commands that apply a committed
// music-on-hold change on a node: a new or changed class is (re)loaded from
// local_stream.conf by name; a renamed class's old stream is stopped first;
// a deleted class's stream is stopped. Nil for other changes.
func StreamCommands(c changes.Change) []command.Command {
	if c.Resource != "music_on_hold" || c.Tenant == "" {
		return nil
	}
	name := func(raw json.RawMessage) string {
		var obj struct {
			Name string `json:"name"`
		}
		if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil || obj.Name == "" {
			return ""
		}
		return naming.MOHStreamName(c.Tenant, obj.Name)
	}
	before, after := name(c.Before), name(c.After)
	var cmds []command.Command
	if before != "" && before != after {
		cmds = append(cmds, command.LocalStreamStop(before))
	}
	if after != "" {
		cmds = append(cmds, command.LocalStreamReload(after))
	}
	return cmds
}

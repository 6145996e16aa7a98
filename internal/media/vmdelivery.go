package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// VoicemailDeliveryData is the voicemail.imported event's payload: what a
// node needs to file the message.
type VoicemailDeliveryData struct {
	ID             int64  `json:"id"`
	ExternalID     string `json:"external_id"`
	Mailbox        string `json:"mailbox"`
	Path           string `json:"path"` // below the media library
	CallerIDName   string `json:"caller_id_name"`
	CallerIDNumber string `json:"caller_id_number"`
	// Read: filed as heard (folder old or saved, or read true).
	Read bool `json:"read"`
}

// VoicemailNodes is what delivery needs of the FreeSWITCH node pool.
type VoicemailNodes = esl.Commander

// VoicemailDelivery files imported messages in mod_voicemail on every
// connected node. mod_voicemail keeps its message index in its own
// database (voicemail_msgs, per node unless its odbc-dsn is shared), so the
// message goes in through mod_voicemail's own API: "vm_inject <box>@<domain>@default
// <file> <cid number> '<cid name>'" copies the file (the media library as
// the node mounts it) into the box's vm-storage-dir as
// msg_<uuid>_broadcast_<file name>, indexes it and lights the phones'
// message-waiting lamps; a message imported as heard is then marked with
// "vm_read … read <uuid>". Delivery is idempotent per node: "vm_list" first
// shows whether a message of that file is there already, so the
// dispatcher's redelivery (at least once) never files it twice.
//
// Limits (mod_voicemail's API): the message's date is the time of the
// injection, not the imported "when"; old and saved both become "heard"
// (mod_voicemail has no other folders); a node that is down when the event
// is handled does not get the message.
type VoicemailDelivery struct {
	Nodes VoicemailNodes
	// Domain is the SIP domain the boxes live in.
	Domain string
	// NodeDir is the media library as the nodes mount it.
	NodeDir string
}

var _ changes.EventSubscriber = (*VoicemailDelivery)(nil)

// Name implements changes.Subscriber.
func (d *VoicemailDelivery) Name() string { return "freeswitch-voicemail" }

// WantsEvents implements changes.EventSubscriber.
func (d *VoicemailDelivery) WantsEvents() bool { return true }

// Handle files one voicemail.imported event on every node that is up; an
// error makes the dispatcher deliver the event again.
func (d *VoicemailDelivery) Handle(ctx context.Context, c changes.Change) error {
	if c.Op != changes.Event || c.Resource != VoicemailImported {
		return nil
	}
	var m VoicemailDeliveryData
	if err := json.Unmarshal(c.After, &m); err != nil {
		return fmt.Errorf("voicemail delivery: decode event %d: %w", c.ID, err)
	}
	cmds, err := d.commands(c.Tenant, m)
	if err != nil {
		return err
	}
	var errs []error
	for _, node := range esl.UpNodes(d.Nodes) {
		if err := d.deliver(ctx, node, cmds); err != nil {
			errs = append(errs, fmt.Errorf("voicemail %s on %s: %w", m.ExternalID, node, err))
		}
	}
	return errors.Join(errs...)
}

// vmCommands are one message's API commands, built from validated parts.
type vmCommands struct {
	list, inject command.Command
	// marker ends the file_path mod_voicemail records for this file.
	marker string
	read   func(uuid string) command.Command
}

// maxVMPath is one less than the file_path length at which vm_inject names
// the copy by time instead of by our file name (so the marker would miss).
const maxVMPath = 249

func (d *VoicemailDelivery) commands(tenant string, m VoicemailDeliveryData) (vmCommands, error) {
	dir := strings.TrimRight(d.NodeDir, "/")
	file := path.Base(m.Path)
	box := naming.VoicemailBox(tenant, m.Mailbox)
	storage := naming.VoicemailStorageDir(dir, tenant, m.Mailbox)
	if storage == "" || !safeRel(m.Path) || !safePart(file) || !safePart(box) || !patParty.MatchString(firstOr(m.CallerIDNumber, "anonymous")) {
		return vmCommands{}, fmt.Errorf("voicemail delivery: message %d has unsafe parts", m.ID)
	}
	if len(storage)+len("/msg_")+36+len("_broadcast_")+len(file) > maxVMPath {
		return vmCommands{}, fmt.Errorf("voicemail delivery: the media directory %q is too long for mod_voicemail's file_path", dir)
	}
	id := box + "@" + d.Domain
	inject := command.VMInject(id, naming.VoicemailProfile, dir+"/"+m.Path, firstOr(m.CallerIDNumber, "anonymous"), vmCallerName(m.CallerIDName))
	c := vmCommands{list: command.VMList(id), inject: inject, marker: "_broadcast_" + file}
	if m.Read {
		c.read = func(uuid string) command.Command { return command.VMRead(id, uuid) }
	}
	return c, nil
}

// deliver files the message on one node unless it is there already.
func (d *VoicemailDelivery) deliver(ctx context.Context, node string, c vmCommands) error {
	api := func(cmd command.Command) (string, error) {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return d.Nodes.API(cctx, node, cmd)
	}
	list, err := api(c.list)
	if err != nil {
		return err
	}
	uuid, heard, found := findVMMessage(list, c.marker)
	if !found {
		out, err := api(c.inject)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(out, "+OK") {
			return fmt.Errorf("mod_voicemail refused the message: %s", strings.TrimSpace(out))
		}
		// vm_inject answers +OK even when it could not read the file (then
		// nothing is filed): only the list proves the message is there.
		if list, err = api(c.list); err != nil {
			return err
		}
		if uuid, heard, found = findVMMessage(list, c.marker); !found {
			return fmt.Errorf("mod_voicemail took the message (+OK) but does not list it")
		}
	}
	if c.read == nil || heard {
		return nil
	}
	out, err := api(c.read(uuid))
	if err != nil {
		return err
	}
	if !strings.HasPrefix(out, "+OK") {
		return fmt.Errorf("mod_voicemail refused to mark the message heard: %s", strings.TrimSpace(out))
	}
	return nil
}

// findVMMessage reads vm_list's text answer (one message a line:
// created:read:user:domain:folder:path:uuid:cid name:cid number:length)
// for the message whose file_path ends in marker.
func findVMMessage(list, marker string) (uuid string, heard, found bool) {
	for _, line := range strings.Split(list, "\n") {
		f := strings.SplitN(line, ":", 8)
		if len(f) < 8 || !strings.HasSuffix(f[5], marker) {
			continue
		}
		return f[6], f[1] != "0" && f[1] != "", true
	}
	return "", false, false
}

// vmCallerName keeps what a single-quoted vm_inject argument carries
// verbatim: printable text without quotes, backslashes or anything
// FreeSWITCH could expand; at most 64 bytes.
func vmCallerName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`'"\${}`, r) || b.Len()+len(string(r)) > 64 {
			continue
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// safeRel reports whether rel is a library path of safe parts.
func safeRel(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if !safePart(p) {
			return false
		}
	}
	return len(parts) > 1
}

func firstOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

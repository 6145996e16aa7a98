package dialplan

import (
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// confirmTone is played after a feature code that changes a setting.
const confirmTone = "tone_stream://%(200,0,500,600,700)"

// featureEvent fires a CUSTOM event that the control plane's ESL consumer
// applies (toggle DND, set a forward, change office mode, agent state...).
// The event carries the channel's variables (sb_tenant, sb_ext), so only the
// feature name and a validated argument are written here.
func featureEvent(feature, arg string) action {
	data := "Event-Name=CUSTOM,Event-Subclass=switchboard::feature,sb_feature=" + feature
	if arg != "" {
		data += ",sb_arg=" + arg
	}
	return act("event", data)
}

// suffixFeatures take a number after their code (*99<ext>, *72<number>).
var suffixFeatures = map[string]bool{"voicemail_direct": true, "forward_all_on": true, "directed_pickup": true}

// optionalSuffixFeatures work alone and with a number after their code:
// *70 parks, *70<slot> parks in or retrieves from the slot.
var optionalSuffixFeatures = map[string]bool{"park": true}

// validCode matches ^\*{1,2}[0-9]{1,6}$.
func validCode(c string) bool {
	d := strings.TrimPrefix(strings.TrimPrefix(c, "*"), "*")
	return len(d) < len(c) && len(d) >= 1 && len(d) <= 6 && allIn(d, "0123456789")
}

// validFeatureCode is validCode, plus the bare "**" that a suffix feature
// may use (directed pickup's default: **<ext>).
func validFeatureCode(c, feature string) bool {
	return validCode(c) || c == "**" && suffixFeatures[feature]
}

// feature matches the tenant's enabled feature codes: exact codes first,
// then codes that take (or may take) a suffix.
func (p *planner) feature(num string) *ext {
	if !strings.HasPrefix(num, "*") {
		return nil
	}
	for pass := 0; pass < 2; pass++ {
		for i := range p.snap.FeatureExtensions {
			f := &p.snap.FeatureExtensions[i]
			if !f.Enabled || !validFeatureCode(f.Code, f.Feature) {
				continue
			}
			if pass == 0 && suffixFeatures[f.Feature] || pass == 1 && !suffixFeatures[f.Feature] && !optionalSuffixFeatures[f.Feature] {
				continue
			}
			arg := ""
			if pass == 0 && num != f.Code {
				continue
			}
			if pass == 1 {
				if !strings.HasPrefix(num, f.Code) || len(num) == len(f.Code) {
					continue
				}
				arg = num[len(f.Code):]
			}
			if f.Feature == "park" {
				// Valet parking needs conditions of its own (park.go); a
				// PIN would guard nothing, so none is asked.
				e := p.parkExt(f.Feature, num, arg)
				if e == nil {
					continue
				}
				p.trace.Match, p.trace.Feature = "feature", f.Feature
				return e
			}
			acts := p.featureActions(f, arg)
			if acts == nil {
				continue
			}
			p.trace.Match, p.trace.Feature = "feature", f.Feature
			return single(f.Feature, num, acts)
		}
	}
	return nil
}

// featureActions maps a feature to actions; nil when it cannot be served.
func (p *planner) featureActions(f *FeatureExtension, arg string) []action {
	var acts []action
	if f.PINRequired {
		// The collected digits travel in the event; the consumer checks them.
		acts = append(acts, act("answer", ""), act("read", "4 10 tone_stream://%(200,0,800) sb_pin 5000 #"))
	}
	switch f.Feature {
	case "voicemail_own":
		// sb_ext is set by our directory on every user: our variable, never
		// a user-supplied value, is expanded here.
		return []action{act("answer", ""), set("voicemail_callback_context", p.tenant), act("voicemail", "check "+naming.VoicemailProfile+" "+p.opts.Domain+" ${sb_ext}-"+p.tenant)}
	case "voicemail_any":
		return p.voicemailAny()
	case "voicemail_direct":
		if !validNumber(arg) {
			return nil
		}
		if x := p.snap.extension(arg); x != nil && x.Enabled && x.VoicemailEnabled {
			return p.voicemail(arg)
		}
		if m := p.snap.mailbox(arg); m != nil && m.Enabled {
			// The mailbox's own number applies its limits.
			return []action{p.transfer(arg)}
		}
		return nil
	case "echo_test":
		return []action{act("answer", ""), act("echo", "")}
	case "moh_test":
		return []action{act("answer", ""), act("playback", "local_stream://moh")}
	case "forward_all_on":
		if !validDialable(arg) {
			return nil
		}
	case "dnd_toggle", "forward_all_off", "office_mode_toggle", "office_mode_day", "office_mode_night",
		"agent_login_logout", "agent_pause_toggle":
	case "record_prompt":
		// The recording goes into the media library as the nodes mount it
		// (naming.PhoneRecordingDir); the feature event, fired once record has
		// closed the file, makes Switchboard convert it into a voice prompt
		// (package features). 16 kHz is the prompts' rate, and keeps the
		// longest recording (300 s, 9.6 MB) within an upload's size.
		dir := naming.PhoneRecordingDir(p.opts.MediaDir, p.tenant)
		if dir == "" {
			return nil
		}
		if !f.PINRequired {
			acts = append(acts, act("answer", ""))
		}
		acts = append(acts, set("record_sample_rate", "16000"), set("playback_terminators", "#"), act("playback", "tone_stream://%(500,0,800)"),
			act("record", dir+"/${uuid}.wav 300 200 3"))
		return append(acts, featureEvent(f.Feature, ""), act("hangup", "NORMAL_CLEARING"))
	case "group_pickup":
		return p.groupPickupActions()
	case "directed_pickup":
		if !validNumber(arg) {
			return nil
		}
		return p.directedPickupActions(arg)
	default:
		return nil
	}
	if !f.PINRequired {
		acts = append(acts, act("answer", ""))
	}
	return append(acts, featureEvent(f.Feature, arg), act("playback", confirmTone), act("hangup", "NORMAL_CLEARING"))
}

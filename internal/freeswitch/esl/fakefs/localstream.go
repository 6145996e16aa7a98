package fakefs

import "strings"

// localStream answers mod_local_stream's API as strictly as the module:
// "local_stream <show|start|reload|stop|hup> <name>", where the name is a
// stream name (no spaces; show may omit it). Anything else is its usage
// line, which a caller must treat as a refusal.
func (s *Server) localStream(args string) string {
	const usage = "-USAGE: local_stream <show|start|reload|stop|hup> <local_stream_name>\n"
	f := strings.Fields(args)
	if len(f) == 0 {
		return usage
	}
	switch f[0] {
	case "show":
		if len(f) > 2 {
			return usage
		}
		return "+OK\n"
	case "reload", "stop", "hup", "start":
		if len(f) != 2 || !validStreamName(f[1]) {
			return usage
		}
		return "+OK\n"
	}
	return usage
}

// validStreamName is what a local_stream.conf directory name may be here:
// letters, digits, '_', '-' and '.'.
func validStreamName(n string) bool {
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return n != ""
}

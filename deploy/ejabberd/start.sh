#!/usr/bin/env bash
# Start ejabberd (Debian's package) with Switchboard's configuration in a
# private directory, in the background, and wait until its HTTP API answers.
#   bash deploy/ejabberd/start.sh [DIR]      (default /var/tmp/switchboard-ejabberd)
# Then run Switchboard with
#   SWITCHBOARD_CHAT_API_URL=http://127.0.0.1:5281/api SWITCHBOARD_CHAT_DOMAIN=localhost \
#   SWITCHBOARD_CHAT_WS_URL=ws://127.0.0.1:5280/ws
# Stop it with: kill "$(cat DIR/ejabberd.pid)"
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-/var/tmp/switchboard-ejabberd}"
mkdir -p "$dir/spool" "$dir/log"
cp "$here/ejabberd.yml" "$here/inetrc" "$dir/"
# Debian's ejabberdctl reads EJABBERD_CONFIG_PATH from its ctl config, which
# would override --config: give it one of our own.
echo "EJABBERD_PID_PATH=$dir/ejabberd.pid" > "$dir/ejabberdctl.cfg"
# As root, ejabberdctl runs the VM as the ejabberd user: it must own the directory.
if [ "$(id -u)" = 0 ] && id ejabberd >/dev/null 2>&1; then chown -R ejabberd:ejabberd "$dir"; fi
api="http://127.0.0.1:5281/api"
if curl -fsS -X POST "$api/status" -d '{}' >/dev/null 2>&1; then
  echo "ejabberd already answers on $api"; exit 0
fi
/usr/sbin/ejabberdctl --config-dir "$dir" --ctl-config "$dir/ejabberdctl.cfg" \
  --config "$dir/ejabberd.yml" --spool "$dir/spool" --logs "$dir/log" \
  --node switchboard-chat@localhost start
for _ in $(seq 1 60); do
  if curl -fsS -X POST "$api/status" -d '{}' >/dev/null 2>&1; then
    echo "ejabberd answers on $api (WebSocket ws://127.0.0.1:5280/ws, logs in $dir/log)"; exit 0
  fi
  sleep 0.5
done
echo "ejabberd did not start; see $dir/log/ejabberd.log" >&2
exit 1

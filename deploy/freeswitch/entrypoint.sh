#!/bin/sh
# Renders the FreeSWITCH configuration templates with this installation's
# secrets from the environment, then runs FreeSWITCH in the foreground.
set -eu

conf=${FREESWITCH_CONF:-/etc/freeswitch}

require() {
  eval "value=\${$1:-}"
  if [ -z "$value" ]; then
    echo "entrypoint: $1 is not set" >&2
    exit 1
  fi
  # Values go into XML attributes and a sed replacement: keep them plain.
  case "$value" in
    *[!A-Za-z0-9._:/@-]*)
      echo "entrypoint: $1 may hold only letters, digits and . _ : / @ - (e.g. openssl rand -hex 24)" >&2
      exit 1 ;;
  esac
}
for v in SWITCHBOARD_XMLCURL_URL SWITCHBOARD_XMLCURL_USER SWITCHBOARD_XMLCURL_PASSWORD FREESWITCH_ESL_PASSWORD; do
  require "$v"
done

for t in /switchboard/templates/*.xml; do
  sed -e "s|@SWITCHBOARD_XMLCURL_URL@|$SWITCHBOARD_XMLCURL_URL|g" \
      -e "s|@SWITCHBOARD_XMLCURL_USER@|$SWITCHBOARD_XMLCURL_USER|g" \
      -e "s|@SWITCHBOARD_XMLCURL_PASSWORD@|$SWITCHBOARD_XMLCURL_PASSWORD|g" \
      -e "s|@FREESWITCH_ESL_PASSWORD@|$FREESWITCH_ESL_PASSWORD|g" \
      "$t" > "$conf/autoload_configs/$(basename "$t")"
done
cp /switchboard/static/*.xml "$conf/autoload_configs/"

# The static directory and dialplan: only the empty include.
for d in directory dialplan; do
  rm -rf "${conf:?}/$d"
  mkdir -p "$conf/$d"
  cp /switchboard/empty/00-empty.xml "$conf/$d/"
done

# The media library (/media) is shared with Switchboard (uid/gid 65532, the
# volume's group with setgid): directories and files FreeSWITCH creates
# there (voicemail boxes, faxes, recordings) stay group-writable.
umask 0002

exec freeswitch -nonat -nf -nc

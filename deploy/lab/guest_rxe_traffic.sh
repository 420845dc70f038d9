# guest_rxe_traffic.sh - guest side of capture_rxe_fixture.sh (runs in the lab guests, busybox sh).
#   sh /mnt/guest.sh <g>:  guest 1 is the rxe_traffic server, guest 2 its client.
# /mnt/traffic.env may set FAMILY=4 (default) or FAMILY=6 (RoCEv2 over the IPv6 ULA address).
ID=$1
FAMILY=4
[ -f /mnt/traffic.env ] && . /mnt/traffic.env
D=/sys/class/infiniband/rxe0/ports/1

# the RoCEv2 GID of the wanted family: IPv4-mapped (::ffff:a.b.c.d) or a global IPv6 address
GIDX=""
for t in "$D"/gid_attrs/types/*; do
  i=${t##*/}
  [ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] || continue
  g=$(cat "$D/gids/$i")
  case $g in
    0000:0000:0000:0000:0000:ffff:*) [ "$FAMILY" = 4 ] && { GIDX=$i; break; } ;;
    fe80:*|0000:0000:0000:0000:0000:0000:0000:0000) ;;
    *) [ "$FAMILY" = 6 ] && { GIDX=$i; break; } ;;
  esac
done
echo "g$ID: kernel $(uname -r) $(uname -v)"
echo "g$ID: family IPv$FAMILY, GID index ${GIDX:-none}: $([ -n "$GIDX" ] && cat "$D/gids/$GIDX")"
[ -n "$GIDX" ] || { echo "no RoCEv2 GID for IPv$FAMILY"; grep . "$D"/gids/* "$D"/gid_attrs/types/* 2>/dev/null; exit 1; }

if [ "$FAMILY" = 6 ]; then SERVER=fd00:9::1; else SERVER=10.9.0.1; fi
cp /mnt/rxe_traffic /tmp/rxe_traffic && chmod +x /tmp/rxe_traffic || exit 1
if [ "$ID" = 1 ]; then
  timeout 300 /tmp/rxe_traffic -d rxe0 -g "$GIDX" -t 120
else
  ok=0
  for i in $(seq 60); do ping -c 1 -W 1 "$SERVER" > /dev/null 2>&1 && { ok=1; break; }; done
  [ $ok = 1 ] || { echo "g$ID: $SERVER does not answer ping"; exit 1; }
  timeout 300 /tmp/rxe_traffic -d rxe0 -g "$GIDX" -t 120 "$SERVER"
fi
rc=$?
/usr/sbin/ip -s link show dev eth0 | sed -n '3,6p'
exit $rc

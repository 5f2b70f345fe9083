# A shared folder deeper than the walk goes: the first 64 levels are shared, the rest reported.
d=$ROOT/srv/docs/team
mkdir -p "$d"
chmod 0755 "$ROOT/srv" "$ROOT/srv/docs"
i=0
while [ $i -lt 66 ]; do d=$d/l; i=$((i + 1)); done
mkdir -p "$d"

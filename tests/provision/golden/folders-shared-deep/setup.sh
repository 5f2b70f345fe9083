# A shared folder 66 levels deep: the one walker goes to its end, every level shared.
d=$ROOT/srv/docs/team
mkdir -p "$d"
chmod 0755 "$ROOT/srv" "$ROOT/srv/docs"
i=0
while [ $i -lt 66 ]; do d=$d/l; i=$((i + 1)); done
mkdir -p "$d"

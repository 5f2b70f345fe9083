#!/bin/sh
# The inventory of refusals, read from the source, against the table of docs/testing.md
# ("Refusals"): every refusal needs a row naming the test that provokes it and the mutation
# (tests/mutation/NAME.patch) that breaks it, or a reason why no test can provoke it.
# A refusal is, by its key (FILE FUNCTION: "the first string of its message"):
#   - a place where pam_slots denies a session: each PAM_PERM_DENIED of pam/ (its key: the
#     message pam_syslog logs in the same block, or the block's condition when it logs none),
#     and each pam_syslog at LOG_ERR of pam/ that is no "ignored" line (the reason it gives);
#   - a raise site of an error in pam/ (slots_error_set/_refuse/_invalid), and in
#     src/core/sdmanager.c's connection and job, whose failures refuse a session;
#   - a raise site of the kind "refused" (slots_error_refuse, or a kind set to
#     SLOTS_ERR_REFUSED) anywhere in src/ and pam/: what the commands report as refused.
# Fails (exit 1) naming each refusal without a row, each row without its refusal, each row
# whose test or patch does not exist, and each patch whose "# tests:" line names none of its
# row's tests.  Any user; no build needed.  `sh tests/refusals.sh --list` prints the keys only.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
table=$top/docs/testing.md

# The keys, one a line, sorted; found by reading the C files as text.
inventory() {
	cd "$top" || exit 2
	awk '
	function lit(s) {       # the first string literal of s, or ""
		if (match(s, /"([^"\\]|\\.)*"/))
			return substr(s, RSTART, RLENGTH)
		return ""
	}
	function trim(s) { sub(/^[ \t}]+/, "", s); sub(/[ \t{]+$/, "", s); return s }
	function emit(k) {
		k = FILENAME " " fn ": " k
		if (k in seen) { seen[k]++; k = k " #" seen[k] } else seen[k] = 1
		print k
	}
	# argn(s, n): the nth argument (1-based) of the call that s starts with (after its "("),
	# or "" while s does not reach it; strings and parentheses are skipped over.
	function argn(s, n,    i, c, d, q, a, from) {
		d = 0; q = 0; a = 1; from = 1
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (q) { if (c == "\\") i++; else if (c == "\"") q = 0; continue }
			if (c == "\"") q = 1
			else if (c == "(") d++
			else if (c == ")") { if (d == 0) return a == n ? substr(s, from, i - from) : ""; d-- }
			else if (c == "," && d == 0) {
				if (a == n) return substr(s, from, i - from)
				a++; from = i + 1
			}
		}
		return ""
	}
	# A call whose message is its argument at: kept until the message is read (a later line).
	function start(name, at) {
		call = $0; sub(".*" name "\\(", "", call); want = at; pending(); 
	}
	function pending(    m) {
		m = argn(call, want)
		if (m == "") { waiting = 1; return }
		waiting = 0
		m = lit(m)
		if (kindof == "syslog") { said = m; if (m !~ /ignored/) emit(m) } else emit(m)
	}
	FNR == 1 { fn = "(file)"; cond = ""; said = ""; waiting = 0 }
	/^[ \t]*(\/\*|\*)/ { next }                     # comment lines
	waiting { call = call " " $0; pending(); next }
	/^[A-Za-z].*[a-z_0-9]+\(/ && !/;[ \t]*$/ {      # a function starts at column 0
		s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ \t*]+/); fn = w[n]
	}
	/^[ \t]*(\} else )?if \(/ { cond = trim($0); said = "" }
	FILENAME ~ /^pam\// && /pam_syslog\(.*LOG_ERR/ { kindof = "syslog"; start("pam_syslog", 3) }
	FILENAME ~ /^pam\// && /(return|ret =) PAM_PERM_DENIED;/ {
		k = said != "" ? said : cond
		if (!((FILENAME " " fn ": " k) in seen)) emit(k)
	}
	/slots_error_refuse\(/ { kindof = "raise"; start("slots_error_refuse", 4) }
	(FILENAME ~ /^pam\// || (FILENAME ~ /sdmanager\.c$/ && fn ~ /^slots_manager_(connect|job)$/)) &&
	    /slots_error_(set|invalid)\(/ { kindof = "raise"; start("slots_error_(set|invalid)", 4) }
	/kind = SLOTS_ERR_REFUSED/ { emit("kind = SLOTS_ERR_REFUSED") }
	' $(find src pam -name '*.c' ! -path src/core/error.c | LC_ALL=C sort) | LC_ALL=C sort
}

# The table's rows: KEY<TAB>TESTS<TAB>MUTATION, from the lines "| `KEY` | TESTS | MUTATION |"
# of the section "## Refusals" of docs/testing.md.
rows() {
	awk '/^## Refusals/ { on = 1; next } /^## / { on = 0 } on && /^\| `/' "$table" |
		sed 's/^| `\(.*\)` | \(.*\) | \(.*\) |$/\1	\2	\3/'
}

if [ "${1:-}" = --list ]; then
	inventory
	exit 0
fi
[ -f "$table" ] || { echo "Bail out! $table is missing"; exit 99; }
found=$(mktemp) && listed=$(mktemp) || exit 99
trap 'rm -f "$found" "$listed"' EXIT
inventory >"$found"
rows >"$listed"
bad=0
fail() { echo "not ok - $*"; bad=$((bad + 1)); }

# Each refusal of the source has its row.
while IFS= read -r key; do
	if ! cut -f1 "$listed" | grep -qxF -- "$key"; then
		fail "no row in docs/testing.md (## Refusals) for: $key"
		echo "#   add: | \`$key\` | TEST | MUTATION |"
	fi
done <"$found"

# Each row is a refusal of the source, its tests and patch exist, the patch names one of them.
tab=$(printf '\t')
while IFS="$tab" read -r key tests mutation; do
	grep -qxF -- "$key" "$found" ||
		fail "a row for a refusal no longer in the source (update or remove it): $key"
	case $tests in
	none:*)
		[ "$mutation" = - ] || fail "$key: a row without a test has no mutation either ('-'), not $mutation"
		continue ;;
	esac
	for t in $tests; do
		src=$top/$t
		case $t in *.sh | *.py) ;; *) src=$top/$t.c ;; esac
		[ -f "$src" ] || fail "$key: its test $t does not exist ($src)"
	done
	patch=$top/tests/mutation/$mutation.patch
	if [ ! -f "$patch" ]; then
		fail "$key: its mutation tests/mutation/$mutation.patch does not exist"
		continue
	fi
	named=$(sed -n 's/^# tests: //p' "$patch" | head -n 1)
	hit=
	for t in $tests; do
		case " $named " in *" $t "*) hit=1 ;; esac
	done
	[ -n "$hit" ] || fail "$key: tests/mutation/$mutation.patch names none of $tests in its '# tests:' line"
done <"$listed"

n=$(wc -l <"$found")
if [ "$bad" -gt 0 ]; then
	echo "# $bad problems in the table of $n refusals (docs/testing.md, ## Refusals)"
	exit 1
fi
echo "ok - every one of the $n refusals has its row, its test and its mutation"

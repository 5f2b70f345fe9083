#!/bin/sh
# The layout's rules, checked on the sources (docs/ARCHITECTURE.md): no file of src/ or pam/ over
# 800 lines and no function over 70 (those named in over_caps below may not grow, only shrink);
# the layer rule (pam/ and src/core include only src/core, pam/ its own headers too; src/lib never
# a header of src/ or pam/); a private header (-int.h) included only from its own folder and by the
# unit tests docs/ARCHITECTURE.md names; no include cycle between the files of src/ and pam/ (a file
# that calls, through a header it includes, a function another file defines depends on it); no code
# comment that cites an issue number (history goes in commit messages); every src/core and src/lib
# .c file opens with a comment that says what it owns.  Attributes before the storage class
# (__attribute__((noreturn)) static void f) are read past.  Each violation is printed as
# FILE:LINE: what; exit 1 when there is one.  tests/arch-rows.sh breaks each rule on a copy.
# Usage: tests/arch.sh [SRCDIR]   (default: $top_srcdir, else the folder above this script);
# ARCH_EDGES=1 prints every edge found ("edge: FROM LINE TO FUNCTION").
set -u
top=${1:-${top_srcdir:-$(dirname "$0")/..}}
cd "$top" || exit 2
max_lines=800
max_fn=70
# Over the caps before the caps were checked: FILE[:FUNCTION] and its size now, which it may not pass.
over_caps="src/lib/provision/provision-accounts.c 882 src/lib/accounts.c 875 src/core/config.c 859
src/lib/procs.c:end_processes 71 src/lib/logindefs.c:slots_logindefs_parse 72
src/lib/check/check-slot.c:check_private 72 src/lib/check/check-host.c:check_roots 76
src/lib/check/check-sudoers.c:check_sudo_grants 78 src/lib/accounts.c:index_line 71
src/lib/provision/provision-folders.c:prov_releases 79 src/lib/provision/provision-accounts.c:plan_shared 71
src/lib/provision/provision-accounts.c:check_user 73 src/lib/provision/provision-files.c:prov_table_step 78
src/lib/provision/provision.c:slots_provision 78 src/core/config.c:parse_key 71 src/core/fsutil.c:slots_ensure_dir 74"
bad=0
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

files=$(find src pam -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)

# ---- size ----
# shellcheck disable=SC2086 # $files: one word per file, split on purpose
wc -l $files | awk -v caps="$over_caps" -v max="$max_lines" '
	BEGIN { n = split(caps, c, /[ \n]+/); for (i = 1; i < n; i += 2) cap[c[i]] = c[i + 1] }
	$2 != "total" && $1 > ($2 in cap ? cap[$2] : max) {
		printf "%s:%d: %d lines, more than %d: split it by concern\n", $2, $1, $1, $2 in cap ? cap[$2] : max
	}' >"$tmp/sizes"
if [ -s "$tmp/sizes" ]; then
	cat "$tmp/sizes"
	bad=1
fi

# ---- function length ----
# A definition opens at column 0 with a name and "(" (attributes before the storage class read
# past), not a declaration; its body: from the "{" at column 0 to the "}" at column 0, both not counted.
# shellcheck disable=SC2086 # $files: one word per file, split on purpose
awk '
	function strip(s) {
		while (match(s, /^__attribute__[ \t]*\(\([^()]*(\([^()]*\)[^()]*)*\)\)[ \t]*/)) s = substr(s, RLENGTH + 1)
		return s
	}
	FNR == 1 { start = 0; body = 0 }
	!body && /^[A-Za-z_]/ && !/;[ \t]*$/ && !/=/ {
		s = strip($0)
		if (s ~ /^(typedef|extern|enum|union|struct[ \t]+[A-Za-z_0-9]+[ \t]*\{)/ || s !~ /\(/) next
		name = s; sub(/[ \t]*\(.*/, "", name); sub(/.*[^A-Za-z_0-9]/, "", name)
		start = FNR; next
	}
	start && !body && /\)[ \t]*;[ \t]*$/ { start = 0; next }
	start && !body && /^\{/ { body = FNR; next }
	body && /^\}/ { print FILENAME, start, name, FNR - body - 1; start = 0; body = 0 }
' $(echo "$files" | grep '\.c$') >"$tmp/fns"
awk -v caps="$over_caps" -v max="$max_fn" '
	BEGIN { n = split(caps, c, /[ \n]+/); for (i = 1; i < n; i += 2) cap[c[i]] = c[i + 1] }
	{ k = $1 ":" $3; m = k in cap ? cap[k] : max }
	$4 > m { printf "%s:%d: %s() is %d lines, more than %d: split it\n", $1, $2, $3, $4, m }
' "$tmp/fns" >"$tmp/long"
if [ -s "$tmp/long" ]; then
	cat "$tmp/long"
	bad=1
fi

# ---- layers and private headers ----
# Where #include "h" of file f is found: beside f, else on the include folders in order.  The
# layer rule, then the private headers: a -int.h of another folder only for the unit tests
# docs/ARCHITECTURE.md names in its paragraphs about private headers.
allowed=$(awk -v RS= '/-int\.h/' docs/ARCHITECTURE.md 2>/dev/null | grep -o 'test-[a-z0-9-]*\.c' | sort -u | tr '\n' ' ')
# shellcheck disable=SC2046 # the file lists: one word per file, split on purpose
awk -v allowed=" $allowed" '
	BEGIN { n = split("src/core src/lib src/lib/lifecycle src/lib/check src/lib/provision src pam tests/unit", dirs, " ") }
	function dir(p) { return substr(p, 1, match(p, /\/[^\/]*$/) - 1) }
	function exists(p,   line) {
		if (!(p in seen)) { seen[p] = (getline line < p) >= 0; close(p) }
		return seen[p]
	}
	function found(f, h,   d, i) {
		d = dir(f) "/" h
		if (exists(d)) return d
		for (i = 1; i <= n; i++) if (exists(dirs[i] "/" h)) return dirs[i] "/" h
		return ""
	}
	/^[ \t]*#[ \t]*include[ \t]*"/ {
		h = $0; sub(/^[^"]*"/, "", h); sub(/".*$/, "", h)
		if ((g = found(FILENAME, h)) == "") next
		from = dir(FILENAME); to = dir(g); base = FILENAME; sub(/.*\//, "", base)
		if ((from == "src/core" || from == "pam") && to != "src/core" && to != from)
			printf "%s:%d: includes %s: %s sees only src/core\n", FILENAME, FNR, g, from
		else if (from ~ /^src\/lib/ && (to == "src" || to == "pam"))
			printf "%s:%d: includes %s: src/lib never includes a header of src/ or pam/\n", FILENAME, FNR, g
		if (g ~ /-int\.h$/ && to != from && index(allowed, " " base " ") == 0)
			printf "%s:%d: includes %s, private to %s (its public header is the way in)\n", FILENAME, FNR, g, to
	}
' $files $(find tests -name '*.c' | LC_ALL=C sort) >"$tmp/layers"
if [ -s "$tmp/layers" ]; then
	cat "$tmp/layers"
	bad=1
fi

# ---- include cycles ----
# An edge a.c -> b.c: a.c calls a function that b.c defines, declared in a header a.c reaches
# through its #include "x.h" lines (and the headers those include).  LINE is a.c's #include that
# leads to the declaration.  A header is found beside the file that includes it, else in the library folders.
# shellcheck disable=SC2086 # $files: one word per file, split on purpose
awk '
	function dir(p) { return substr(p, 1, match(p, /\/[^\/]*$/) - 1) }
	BEGIN { nlib = split("src/core src/lib src/lib/lifecycle src/lib/check src/lib/provision", lib, " ") }
	function found(from, h,   d, i) {
		d = dir(from) "/" h
		if (d in isfile) return d
		for (i = 1; i <= nlib; i++) if ((lib[i] "/" h) in isfile) return lib[i] "/" h
		return ""
	}
	# The line without comments and string literals (a comment that spans lines is dropped too).
	function code(s,   out, b, e) {
		out = ""
		while (s != "") {
			if (incomment) {
				e = index(s, "*/")
				if (e == 0) return out
				s = substr(s, e + 2); incomment = 0
			}
			b = index(s, "/*")
			if (b == 0) { out = out s; break }
			out = out substr(s, 1, b - 1); s = substr(s, b + 2); incomment = 1
		}
		sub(/\/\/.*/, "", out)
		gsub(/"([^"\\]|\\.)*"/, "\"\"", out)
		gsub(/\047([^\047\\]|\\.)*\047/, "0", out)
		return out
	}
	FNR == 1 { incomment = 0; isfile[FILENAME] = 1 }
	/^[ \t]*#[ \t]*include[ \t]*"/ {
		h = $0; sub(/^[^"]*"/, "", h); sub(/".*$/, "", h)
		incs[FILENAME] = incs[FILENAME] " " h; incline[FILENAME SUBSEP h] = FNR
		next
	}
	{
		c = code($0)
		# A definition: at the start of a line (attributes read past), not static, not a declaration.
		d = c
		while (match(d, /^__attribute__[ \t]*\(\([^()]*(\([^()]*\)[^()]*)*\)\)[ \t]*/)) d = substr(d, RLENGTH + 1)
		if (FILENAME ~ /\.c$/ && d ~ /^[A-Za-z_]/ && d !~ /^(static|typedef|extern|struct[ \t]+[A-Za-z_0-9]+[ \t]*\{)/ &&
		    d ~ /[A-Za-z_][A-Za-z_0-9]*[ \t]*\(/ && d !~ /;[ \t]*$/ && d !~ /=/) {
			n = d; sub(/[ \t]*\(.*/, "", n); sub(/.*[^A-Za-z_0-9]/, "", n)
			if (n != "") def[n] = FILENAME
		}
		while (match(c, /[A-Za-z_][A-Za-z_0-9]*[ \t]*\(/)) {
			n = substr(c, RSTART, RLENGTH); sub(/[ \t]*\($/, "", n)
			names[FILENAME] = names[FILENAME] " " n
			c = substr(c, RSTART + RLENGTH)
		}
	}
	# The headers c reaches, each with the line of c s own #include that leads to it.
	function reach(c, h, ln,   parts, m, k, g) {
		if ((c SUBSEP h) in via) return
		via[c SUBSEP h] = ln; reached[c] = reached[c] " " h
		m = split(incs[h], parts, " ")
		for (k = 1; k <= m; k++) if ((g = found(h, parts[k])) != "") reach(c, g, ln)
	}
	END {
		for (f in isfile) {
			m = split(names[f], parts, " ")
			for (k = 1; k <= m; k++) if (f ~ /\.h$/) declared[f SUBSEP parts[k]] = 1
		}
		for (f in isfile) {
			if (f !~ /\.c$/) continue
			m = split(incs[f], parts, " ")
			for (k = 1; k <= m; k++) if ((g = found(f, parts[k])) != "") reach(f, g, incline[f SUBSEP parts[k]])
			m = split(names[f], used, " ")
			hn = split(reached[f], hs, " ")
			for (k = 1; k <= m; k++) {
				n = used[k]
				if (!(n in def) || def[n] == f || ((f SUBSEP def[n]) in edge)) continue
				for (j = 1; j <= hn; j++)
					if ((hs[j] SUBSEP n) in declared) { edge[f SUBSEP def[n]] = via[f SUBSEP hs[j]] " " n; break }
			}
		}
		for (e in edge) { split(e, p, SUBSEP); split(edge[e], q, " "); print p[1], q[1], p[2], q[2] }
	}' $files | LC_ALL=C sort >"$tmp/edges"
[ "${ARCH_EDGES:-}" = 1 ] && sed 's/^/edge: /' "$tmp/edges"
# A cycle: a path back to where it started.  Each cycle is printed once, from its first file.
awk '
	{ to[$1] = to[$1] " " $3; ln[$1 SUBSEP $3] = $2; fn[$1 SUBSEP $3] = $4; node[$1] = 1; node[$3] = 1 }
	function dfs(v, depth,   k, parts, m, w, i, key, msg) {
		state[v] = 1; stack[depth] = v
		m = split(to[v], parts, " ")
		for (k = 1; k <= m; k++) {
			w = parts[k]
			if (state[w] == 1) {
				for (i = 1; i <= depth && stack[i] != w; i++) ;
				key = ""; msg = ""
				for (; i <= depth; i++) {
					nxt = i < depth ? stack[i + 1] : w
					msg = msg sprintf("%s:%s: calls %s() of %s\n", stack[i], ln[stack[i] SUBSEP nxt],
					                  fn[stack[i] SUBSEP nxt], nxt)
					key = key " " stack[i]
				}
				if (!(key in done)) { done[key] = 1; printf "%s", msg; found = 1 }
			} else if (state[w] == 0) {
				dfs(w, depth + 1)
			}
		}
		state[v] = 2
	}
	END {
		n = 0
		for (v in node) names[++n] = v
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (names[j] < names[i]) { t = names[i]; names[i] = names[j]; names[j] = t }
		for (i = 1; i <= n; i++) if (state[names[i]] == 0) dfs(names[i], 1)
		exit found ? 1 : 0
	}' "$tmp/edges" >"$tmp/cycles"
if [ -s "$tmp/cycles" ]; then
	echo "include cycles (each line one edge of a cycle; the rows must call down, never up):"
	cat "$tmp/cycles"
	bad=1
fi

# ---- issue numbers in code comments ----
for f in $files; do
	awk -v f="$f" '
		{
			s = $0; text = ""
			while (s != "") {
				if (incomment) {
					e = index(s, "*/")
					if (e == 0) { text = text " " s; s = "" }
					else { text = text " " substr(s, 1, e - 1); s = substr(s, e + 2); incomment = 0 }
				} else {
					b = index(s, "/*"); l = index(s, "//")
					if (l && (!b || l < b)) { text = text " " substr(s, l + 2); s = "" }
					else if (b) { s = substr(s, b + 2); incomment = 1 }
					else s = ""
				}
			}
			if (text ~ /[Ii]ssues?[ \t]+#?[0-9]/ || text ~ /(^|[^&A-Za-z0-9_])#[0-9]+/)
				printf "%s:%d: a comment cites an issue number (history belongs in the commit message)\n", f, FNR
		}' "$f"
done >"$tmp/issues"
if [ -s "$tmp/issues" ]; then
	cat "$tmp/issues"
	bad=1
fi

# ---- the opening sentence ----
for f in $(find src/core src/lib -name "*.c" | LC_ALL=C sort); do
	first=$(sed -n '1p' "$f")
	second=$(sed -n '2p' "$f")
	case $first in
	'/* '[A-Za-z\`\"\'\(]*) ;;
	'/*')
		case $second in
		' * '[A-Za-z\`\"\'\(]*) ;;
		*) echo "$f:1: does not open with a comment that says what it owns"; bad=1 ;;
		esac ;;
	*) echo "$f:1: does not open with a comment that says what it owns"; bad=1 ;;
	esac
done

exit $bad

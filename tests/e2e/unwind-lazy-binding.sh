#!/bin/sh
# The unwinder restores callee-saved registers from their CFI save slots: glibc's lazy-binding
# resolver (_dl_runtime_resolve_xsavec) keeps its CFA in rbx, which _dl_fixup, below it, saves
# and reuses. lazybind (-z lazy, -O2 -fomit-frame-pointer) calls into libc from call_libc; with
# LD_BIND_NOT=1 every call goes through the resolver. Of the samples taken in the resolver's
# callees (two frames or more in ld.so: _dl_fixup and below), at least 95% must reach main;
# they must be at least 30, and 5% of the samples (the premise), which holds on a loaded
# machine too: the share does not depend on how much CPU time the workload gets.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=unwind-lib.sh
. "$(dirname "$0")/unwind-lib.sh"
require_perf_events

# in_ld(name): a frame in ld.so, by name or, where ld.so has no symbols, as the module
ld_awk='
function in_ld(s) { return s ~ /^_dl_|^do_lookup_x$|^check_match$/ || s ~ /^\[ld-linux/ }
'

# check NAME: "samples deep good percentage" of $dir/NAME.folded; the deep samples without the
# chain into $dir/NAME.bad
check() {
	awk "$unwind_awk$ld_awk"'
	{
		parse()
		total += n
		lds = 0
		for (i = 2; i <= k; i++) if (in_ld(f[i])) lds++
		if (lds < 2) next
		deep += n
		if (main_at() > 0 && !has_pseudo()) good += n
		else print n, line > bad
	}
	END { printf "%d %d %d %s\n", total, deep, good, pct(good, deep) }' bad="$dir/$1.bad" "$dir/$1.folded"
}

LD_BIND_NOT=1 record default -- "$WORKLOADS/lazybind" 3
read -r total deep good percent <<EOF2
$(check default)
EOF2
echo "unwind-lazy-binding: $percent ($good of $deep samples in the resolver's callees) reach main; $deep of $total samples there"

[ "$deep" -ge 30 ] || fail "only $deep samples in the resolver's callees, of $total"
[ $((deep * 100)) -ge $((total * 5)) ] ||
	fail "only $deep of $total samples in the resolver's callees (is lazybind bound lazily?): $(awk '{ print $NF, $0 }' "$dir/default.folded" | sort -nr | head -n 5)"
[ $((good * 100)) -ge $((deep * 95)) ] ||
	fail "only $good of $deep samples in the resolver's callees reach main; the others, most frequent first:
$(worst "$dir/default.bad")"
exit 0

# shellcheck shell=sh
# shellcheck disable=SC2154 # dir is lib.sh's, sourced before this file
# Shared by the tests of the cache directory's entries made of a program (debug-cache.sh,
# cfi-cache.sh): one perf.data of the program, converted again and again with the cache off,
# cold, warm and with its entry spoiled. Sourced after lib.sh.

# cache_setup WORKLOAD PERF-RECORD-OPTION...: $prog, a copy of WORKLOAD ($prog.pristine beside
# it), $id its build-id, $dir/rec.data a 1 s perf recording of it, $cache an empty cache
# directory; or a skip where perf cannot record
cache_setup() {
	wl=$1
	shift
	for t in readelf dd truncate; do
		command -v $t >/dev/null 2>&1 || skip "$t is not installed"
	done
	require_perf_events
	require_perf_record
	prog=$dir/prog
	cp "$wl" "$prog"
	cp "$prog" "$dir/prog.pristine"
	id=$(readelf -n "$prog" | awk '/Build ID/ { print $3; exit }')
	[ -n "$id" ] || fail "the workload has no build-id"
	perf record -q "$@" -o "$dir/rec.data" -- "$prog" 1 >/dev/null 2>"$dir/perf.err" ||
		perf record -q "$@" -o "$dir/rec.data" -- "$prog" 1 >/dev/null 2>"$dir/perf.err" ||
		skip "perf record failed: $(head -n1 "$dir/perf.err")"
	cache=$dir/cache
	mkdir -m 700 "$cache"
}

# convert NAME [CACHE]: rec.data as NAME.folded, with $convert_args, and NAME.pb.gz too when
# $convert_pprof is 1, with the cache directory CACHE (none: off)
convert_args=
convert_pprof=0
convert() {
	pp=
	[ "$convert_pprof" = 0 ] || pp="-o $dir/$1.pb.gz"
	# shellcheck disable=SC2086 # the options, word by word
	HOTSTACK_CACHE_DIR=${2:-} "$HOTSTACK" convert "$dir/rec.data" $convert_args -o "$dir/$1.folded" $pp \
		2>"$dir/$1.err" || fail "convert $1: $(cat "$dir/$1.err")"
}

# same A B: the two conversions are identical
same() {
	cmp -s "$dir/$1.folded" "$dir/$2.folded" ||
		fail "$1 and $2 differ: $(diff "$dir/$1.folded" "$dir/$2.folded" | cut -c1-300 | head -4)"
	[ "$convert_pprof" = 0 ] || cmp -s "$dir/$1.pb.gz" "$dir/$2.pb.gz" || fail "the pprof of $1 and $2 differ"
}

# not_read WHAT: with the entry as it now is, the conversion is the one made without the
# entry's help ("bad", converted by the test first)
not_read() {
	convert "$1" "$cache"
	same bad "$1"
}

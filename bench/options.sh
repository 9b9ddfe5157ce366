# bench/options.sh: the checks of the bench scripts' options, sourced by
# each (the scripts set `me` to their name first).

# opt_arg "$@" at an option that takes a value: it must have one.
opt_arg() {
	[ $# -gt 1 ] || { echo "$me: $1 needs a value (see --help)" >&2; exit 2; }
}

# opt_count OPTION VALUE...: each VALUE must be a whole number of at least 1.
opt_count() {
	local opt=$1 v
	shift
	for v in "$@"; do
		case $v in
		'' | *[!0-9]* | 0 | 0*) echo "$me: $opt $v: not a whole number of at least 1" >&2; exit 2 ;;
		esac
	done
}

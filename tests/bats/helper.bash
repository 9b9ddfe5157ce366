# helper.bash - loaded by every bats file with `load helper`.
#
# make check exports SUFS_BUILDDIR and SUFS_SRCDIR (absolute top build and
# source directories).  Run by hand (`bats tests/bats/mkfs.bats`), the
# source directory is two levels above this file and the build directory is
# its build/ if there is one (./setup.sh builds there), else the source tree.

# shellcheck disable=SC2034  # the variables below are for the files that load this

if [ -z "${SUFS_SRCDIR:-}" ]; then
	SUFS_SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fi
if [ -z "${SUFS_BUILDDIR:-}" ]; then
	if [ -d "$SUFS_SRCDIR/build" ]; then
		SUFS_BUILDDIR=$SUFS_SRCDIR/build
	else
		SUFS_BUILDDIR=$SUFS_SRCDIR
	fi
fi
export SUFS_SRCDIR SUFS_BUILDDIR

# bats-support and bats-assert: Debian's packages put them here; elsewhere
# bats_load_library searches BATS_LIB_PATH.
_sufs_load_lib() {
	if [ -f "/usr/lib/bats/$1/load.bash" ]; then
		load "/usr/lib/bats/$1/load"
	elif ! bats_load_library "$1"; then
		echo "helper.bash: $1 not found (apt-get install $1)" >&2
		return 1
	fi
}
_sufs_load_lib bats-support
_sufs_load_lib bats-assert

MKFS=$SUFS_BUILDDIR/mkfs/mkfs.sufs
DUMP=$SUFS_BUILDDIR/dump/sufs-dump
DEBUG=$SUFS_BUILDDIR/debug/sufs-debug
FSCK=$SUFS_BUILDDIR/fsck/fsck.sufs
REPLAY=$SUFS_BUILDDIR/replay/sufs-replay
SNAP=$SUFS_BUILDDIR/snapshot/sufs-snap
TUNE=$SUFS_BUILDDIR/tune/sufs-tune

# The deterministic tree generator lives in shared/ beside the repository;
# a clone without it gets MKTREE empty, and tests that need a tree build
# their own (or skip: see require_mktree).
MKTREE=
if [ -x "$SUFS_SRCDIR/../shared/tools/mktree" ] && command -v python3 >/dev/null; then
	MKTREE=$(cd "$SUFS_SRCDIR/../shared/tools" && pwd)/mktree
fi

# A fresh directory per test, removed by bats afterwards.
T=${BATS_TEST_TMPDIR:-${BATS_FILE_TMPDIR:-}}

# mkimg IMG [SIZE] [mkfs options...]: format a fresh image (16M by default).
mkimg() {
	local img=$1 size=${2:-16M}
	shift $(($# < 2 ? $# : 2))
	rm -f "$img"
	"$MKFS" -q "$@" "$img" "$size"
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
}

require_cmd() {
	command -v "$1" >/dev/null || skip "needs $1"
}

# on_tty CMD [ARG...]: run CMD on a terminal (script(1) gives it one for
# its standard input, output and error), its progress bars drawn at once
# (SUFS_PROGRESS_DELAY=0).  $output is what the terminal showed, each
# carriage return a new line, so that every drawing of a bar is a line;
# $lines its lines; $status the command's exit status.
on_tty() {
	require_cmd script
	run env SUFS_PROGRESS_DELAY=0 script -qec "$(printf '%q ' "$@")" /dev/null </dev/null
	output=$(printf '%s\n' "$output" | sed 's/\r$//' | tr '\r' '\n' | sed '/^$/d')
	mapfile -t lines <<<"$output"
}

require_mktree() {
	[ -n "$MKTREE" ] || skip "needs shared/tools/mktree beside the repository"
}

# run_examples PAGE [--prompt PROGRAM]: run the commands of the EXAMPLES of
# man/PAGE one after the other (tests/bats/examples.py) in the empty
# directory $T/run, the build's programs first in PATH, neither TZ nor
# SOURCE_DATE_EPOCH set (the page sets what it needs); leaves the
# transcript the page shows in $T/expected and the one the commands
# printed in $T/actual, for the test to compare.
run_examples() {
	local b=$SUFS_BUILDDIR
	require_cmd python3
	python3 "$SUFS_SRCDIR/tests/bats/examples.py" "$SUFS_SRCDIR/man/$1" \
		"$T/examples.sh" "$T/expected" "${@:2}" || return 1
	mkdir -p "$T/run"
	(
		cd "$T/run" &&
		PATH=$b/mkfs:$b/debug:$b/fsck:$b/replay:$b/dump:$b/snapshot:$b/tune:$PATH \
			env -u TZ -u SOURCE_DATE_EPOCH bash "$T/examples.sh" >"$T/actual"
	)
}

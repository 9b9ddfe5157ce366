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
FUSE=$SUFS_BUILDDIR/fuse/sufs-fuse
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

# require_fuse: sufs-fuse built, and a mount possible here: root (the
# tests mount with allow_other and check owners), /dev/fuse usable and
# fusermount3 there.  Skipped otherwise, saying which.
require_fuse() {
	[ -x "$FUSE" ] || skip "sufs-fuse is not built (configure did not find libfuse3)"
	require_root
	[ -c /dev/fuse ] && { : </dev/fuse; } 2>/dev/null || skip "needs /dev/fuse"
	require_cmd fusermount3
}

# fuse_mount IMG DIR [ARG...]: mount IMG on DIR with sufs-fuse in the
# foreground (-f), as a job of the test, its messages in $T/fuse.log; its
# pid in $FUSE_PID.  Waits until the mount is there; fails if the daemon
# exits first (its status in $status, its messages in $output).
fuse_mount() {
	local img=$1 dir=$2
	shift 2
	# a job of a script starts with SIGINT ignored, which sufs-fuse keeps
	env --default-signal=INT "$FUSE" -f "$img" "$dir" "$@" >"$T/fuse.log" 2>&1 3>&- &
	FUSE_PID=$!
	for _ in $(seq 400); do
		mountpoint -q "$dir" && return 0
		kill -0 "$FUSE_PID" 2>/dev/null || break
		sleep 0.025
	done
	status=0
	wait "$FUSE_PID" || status=$?
	output=$(cat "$T/fuse.log")
	FUSE_PID=
	return 1
}

# fuse_unmount DIR: unmount with fusermount3 -u and wait for the daemon
# to have written everything back; its exit status is the function's.
fuse_unmount() {
	local rc=0
	fusermount3 -u "$1" || return 1
	if [ -n "${FUSE_PID:-}" ]; then
		wait "$FUSE_PID" || rc=$?
		FUSE_PID=
	fi
	return $rc
}

# wait_closed IMG: wait (10 s at most) until no program holds IMG's write
# lock: a daemon in the background has closed it.
wait_closed() {
	for _ in $(seq 400); do
		flock -n "$1" true && return 0
		sleep 0.025
	done
	return 1
}

# fuse_cleanup DIR...: for teardown: whatever a test left mounted goes
# (lazily if it must), and a daemon still running is killed.
fuse_cleanup() {
	local d
	for d in "$@"; do
		if mountpoint -q "$d" 2>/dev/null; then
			fusermount3 -u "$d" 2>/dev/null || umount -l "$d" 2>/dev/null || true
		fi
	done
	if [ -n "${FUSE_PID:-}" ]; then
		for _ in $(seq 200); do
			kill -0 "$FUSE_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -9 "$FUSE_PID" 2>/dev/null || true
		wait "$FUSE_PID" 2>/dev/null || true
		FUSE_PID=
	fi
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
		PATH=$b/mkfs:$b/debug:$b/fsck:$b/replay:$b/dump:$b/snapshot:$b/tune:$b/fuse:$PATH \
			env -u TZ -u SOURCE_DATE_EPOCH bash "$T/examples.sh" >"$T/actual"
	)
}

# long N: N bytes of x
long() {
	printf 'x%.0s' $(seq 1 "$1")
}

# A tree on the host with user. attributes and ACLs, in $SRC; skipped
# where the file system of $T keeps neither.
acl_tree() {
	require_cmd setfattr
	require_cmd getfattr
	require_cmd setfacl
	require_cmd getfacl
	SRC=$T/src
	mkdir -p "$SRC/dir/sub"
	printf 'hello\n' >"$SRC/dir/file"
	printf 'data\n' >"$SRC/big"
	ln -s file "$SRC/dir/link"
	setfattr -n user.colour -v blue "$SRC/dir/file" 2>/dev/null ||
		skip "the file system of $T keeps no user. attributes"
	setfattr -n user.empty "$SRC/dir/file"
	setfattr -n user.bin -v 0x00ff017f "$SRC/dir/file"
	setfattr -n user.long -v "$(long 600)" "$SRC/big"
	setfattr -n user.dir -v top "$SRC/dir"
	setfacl -m u:1234:rw,g:5678:r "$SRC/dir/file" 2>/dev/null ||
		skip "the file system of $T keeps no ACLs"
	setfacl -d -m u:1234:rwx "$SRC/dir/sub"
	setfacl -m u:4321:r "$SRC/dir/sub"
}

# attr_listing DIR: every file's attributes and ACLs, in the order of the
# names (not of a directory's entries, which differ from one file system
# to another).
attr_listing() {
	(
		cd "$1" && find . -path ./lost+found -prune -o -print | LC_ALL=C sort |
			while read -r f; do
				getfattr -h -d -m - "$f" 2>/dev/null
				[ -L "$f" ] || getfacl -p "$f" 2>/dev/null
			done
	)
}

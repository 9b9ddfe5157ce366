#!/usr/bin/env bats
# pjdfstest, the POSIX conformance suite, on a sufs-fuse mount made with
# -o default_permissions,allow_other, as root (tests/pjdfstest/run).  The
# suite runs once, but for 18 of its longest files (tests/pjdfstest/long:
# three quarters of its time, which goes to pjdfstest's own shell), so
# that make check stays within CI's time; make fuse-check runs every
# file, and so does this with SUFS_PJDFSTEST=full.  Then a test per
# system call says whether each of its files passed, but for those
# tests/pjdfstest/expected-failures lists.  Skipped without root,
# /dev/fuse, or pjdfstest's sources beside the repository (make builds
# it from ../shared/third_party/pjdfstest).

bats_require_minimum_version 1.5.0
load helper

# Why the suite cannot run here, or nothing.  (bats's skip in setup_file
# fails the file: setup_file files the reason, and each test skips.)
unable() {
	[ -x "$FUSE" ] || { echo "sufs-fuse is not built (configure did not find libfuse3)"; return; }
	[ "$(id -u)" -eq 0 ] || { echo "needs root"; return; }
	{ [ -c /dev/fuse ] && { : </dev/fuse; } 2>/dev/null; } || { echo "needs /dev/fuse"; return; }
	command -v fusermount3 >/dev/null || { echo "needs fusermount3"; return; }
	command -v prove >/dev/null || { echo "needs prove"; return; }
	[ -x "$SUFS_BUILDDIR/pjdfstest/pjdfstest" ] ||
		echo "pjdfstest is not built: its sources are not in ../shared/third_party/pjdfstest"
}

setup() {
	local why
	why=$(cat "$BATS_FILE_TMPDIR/unable")
	[ -z "$why" ] || skip "$why"
}

setup_file() {
	unable >"$BATS_FILE_TMPDIR/unable"
	[ -s "$BATS_FILE_TMPDIR/unable" ] && return 0
	local rc=0 quick=--quick
	[ "${SUFS_PJDFSTEST:-}" = full ] && quick=
	"$SUFS_SRCDIR/tests/pjdfstest/run" $quick --log "$BATS_FILE_TMPDIR/prove.log" \
		>"$BATS_FILE_TMPDIR/summary" 2>"$BATS_FILE_TMPDIR/errors" || rc=$?
	echo $rc >"$BATS_FILE_TMPDIR/status"
}

# left_out [DIR]: the files of DIR (or of every directory) that this run
# leaves out, one a line
left_out() {
	[ "${SUFS_PJDFSTEST:-}" = full ] && return 0
	sed -E 's/#.*//; /^\s*$/d; s/\s.*//' "$SUFS_SRCDIR/tests/pjdfstest/long" |
		grep -E "^${1:-[^/]+}/" || true
}

# passed DIR: every file of pjdfstest's tests/DIR that the run does not
# leave out ran, and passed or may fail (the run says "DIR/NN.t failed" of
# one that may not)
passed() {
	local log=$BATS_FILE_TMPDIR/prove.log
	[ -f "$log" ] || fail "pjdfstest did not run: $(cat "$BATS_FILE_TMPDIR/errors")"
	n=$(grep -cE "/tests/$1/[0-9]+\.t \.+ " "$log") || true
	want=$(($(find "$SUFS_BUILDDIR/pjdfstest/tests/$1" -name '*.t' | wc -l) - $(left_out "$1" | wc -l)))
	[ "$n" -eq "$want" ] || fail "$n files of $1 ran, not $want"
	run grep -E "^pjdfstest/run: $1/" "$BATS_FILE_TMPDIR/errors"
	if [ "$status" -eq 0 ]; then
		grep -E "/tests/$1/" "$log" | grep -v ' ok$' >&2 || true
		fail "$output"
	fi
}

@test "pjdfstest ran every file it was given, the daemon exited 0 and the image checks clean afterwards" {
	assert_equal "$(cat "$BATS_FILE_TMPDIR/status")" 0 ||
		fail "$(cat "$BATS_FILE_TMPDIR/errors")"
	files=$(($(find "$SUFS_BUILDDIR/pjdfstest/tests" -name '*.t' | wc -l) - $(left_out | wc -l)))
	run cat "$BATS_FILE_TMPDIR/summary"
	assert_output --regexp "^pjdfstest on sufs: $files files, [0-9]+ assertions: "
}

@test "pjdfstest's longest files run too (make fuse-check, or SUFS_PJDFSTEST=full)" {
	n=$(left_out | wc -l)
	[ "$n" -eq 0 ] || skip "$n files left out of make check for time: make fuse-check runs them"
}

@test "pjdfstest chflags: every file passes (pjdfstest leaves it out on Linux)" { passed chflags; }
@test "pjdfstest chmod: every file passes" { passed chmod; }
@test "pjdfstest chown: every file passes" { passed chown; }
@test "pjdfstest ftruncate: every file passes" { passed ftruncate; }
@test "pjdfstest granular: every file passes (pjdfstest leaves it out on Linux)" { passed granular; }
@test "pjdfstest link: every file passes" { passed link; }
@test "pjdfstest mkdir: every file passes" { passed mkdir; }
@test "pjdfstest mkfifo: every file passes" { passed mkfifo; }
@test "pjdfstest mknod: every file passes" { passed mknod; }
@test "pjdfstest open: every file passes" { passed open; }
@test "pjdfstest posix_fallocate: every file passes (pjdfstest leaves it out on Linux)" { passed posix_fallocate; }
@test "pjdfstest rename: every file passes" { passed rename; }
@test "pjdfstest rmdir: every file passes" { passed rmdir; }
@test "pjdfstest symlink: every file passes" { passed symlink; }
@test "pjdfstest truncate: every file passes" { passed truncate; }
@test "pjdfstest unlink: every file passes" { passed unlink; }
@test "pjdfstest utimensat: every file passes" { passed utimensat; }

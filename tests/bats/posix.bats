#!/usr/bin/env bats
# tests/posix/posix-diff: sufs's operations against Linux's, op by op and
# tree against tree.  A short run here (40 seeds of 150 operations); the
# long one is `make posix-check`.  Both sides of the comparison are shown
# to catch a difference: a sufs-debug that answers ENOENT for EEXIST, and
# one that writes other bytes than asked.

load helper

bats_require_minimum_version 1.5.0

DIFF=$SUFS_SRCDIR/tests/posix/posix-diff

setup() {
	require_root # chroot, mknod, chown
	require_cmd python3
	WORK=$T
	[ -d /dev/shm ] && [ -w /dev/shm ] && WORK=$(mktemp -d /dev/shm/sufs-posix.XXXXXX)
}

teardown() {
	[ "${WORK:-$T}" = "$T" ] || rm -rf "$WORK"
}

# fake_debug SED_IN SED_ERR: a build directory whose sufs-debug is the real
# one with its input and its error messages passed through sed
fake_debug() {
	mkdir -p "$T/fake/debug"
	ln -s "$SUFS_BUILDDIR/mkfs" "$SUFS_BUILDDIR/fsck" "$T/fake/"
	cat >"$T/fake/debug/sufs-debug" <<EOF2
#!/bin/bash
sed -u '$1' | '$SUFS_BUILDDIR/debug/sufs-debug' "\$@" 2> >(sed -u '$2' >&2)
EOF2
	chmod +x "$T/fake/debug/sufs-debug"
}

@test "40 random runs of 150 operations give Linux's errors and Linux's tree" {
	run --separate-stderr "$DIFF" --builddir "$SUFS_BUILDDIR" --work "$WORK" --seeds 40
	assert_success
	assert_output "40 seeds, 6000 operations: all agree"
}

@test "an error other than Linux's is reported, with its operation, and fails the run" {
	printf 'mkdir /a\nmkdir /a\n' >"$T/ops"
	run "$DIFF" --builddir "$SUFS_BUILDDIR" --work "$WORK" --replay "$T/ops"
	assert_success
	fake_debug '' 's/(EEXIST)/(ENOENT)/'
	run "$DIFF" --builddir "$T/fake" --work "$WORK" --replay "$T/ops"
	assert_failure 1
	assert_line --regexp '^ +1 mkdir /a +linux=EEXIST sufs=ENOENT +<<< DIFFERS$'
	assert_line "$T/ops: 2 operations: 1 discrepancy"
}

@test "a file whose bytes differ from Linux's at the end fails the run" {
	printf 'create /f\nwrite /f 0 100 5\n' >"$T/ops"
	fake_debug 's/^\(write .*\) [0-9][0-9]*$/\1 99/' ''
	run "$DIFF" --builddir "$T/fake" --work "$WORK" --replay "$T/ops"
	assert_failure 1
	assert_line "  f: contents differ"
}

@test "usage errors and a missing build exit 2" {
	run "$DIFF" --seeds nope
	assert_failure 2
	run --separate-stderr "$DIFF" --builddir "$T/nothing" --seeds 1
	assert_failure 2
	[[ $stderr == *"$T/nothing"* ]] || fail "stderr: $stderr"
}

#!/usr/bin/env bats
# sufs-fuse killed with SIGKILL at random moments of a workload (tar -x,
# postmark, fsync'ed files, rm -rf): each crash leaves only leaks, every
# fsync'ed file is intact, the next mount frees the leaks in the
# background and the image is clean after an unmount (tests/crash/fuse-crash;
# make fuse-crash-check runs 100 crashes, doc/CRASH.md).  Needs root and
# /dev/fuse.

bats_require_minimum_version 1.5.0
load helper

@test "five kills at random moments: only leaks, fsync'ed files intact, each freed by the next mount, clean after unmount" {
	require_fuse
	run "$SUFS_SRCDIR/tests/crash/fuse-crash" --runs 5 --seed 7 --files 200 --max-wait 3 \
		--image-size 256M -v
	assert_success
	assert_line --regexp '^5 crashes \(SIGKILL at 0\.2-3\.0 s\), [0-9]+ left leaks'
	assert_line "no violation"
}

@test "fuse-crash refuses what it cannot do" {
	run --separate-stderr "$SUFS_SRCDIR/tests/crash/fuse-crash" --builddir "$T" --runs 1
	assert_failure 2
	if [ "$(id -u)" -eq 0 ]; then
		assert_equal "$stderr" "fuse-crash: sufs-fuse is not built in $T"
	else
		assert_equal "$stderr" "fuse-crash: needs root"
	fi
}

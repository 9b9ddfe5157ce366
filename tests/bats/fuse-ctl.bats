#!/usr/bin/env bats
# sufs-fuse after a crash, and the programs that reach a mounted image
# through its daemon: kill -9 leaves only leaks; the image mounts again at
# once and the daemon's background check frees them; fsck.sufs -b and
# sufs-snap create, list, delete and export go through the daemon's
# control channel; the other writers refuse a mounted image and the
# readers warn that what they read may be out of date.  Needs root and
# /dev/fuse.

bats_require_minimum_version 1.5.0
load helper

setup() {
	require_fuse
	IMG=$T/fs.img
	MNT=$T/mnt
	mkdir -p "$MNT"
}

teardown() {
	fuse_cleanup "$MNT"
	[ -z "${OPEN:-}" ] || rm -rf "$OPEN"
}

mnt() {
	fuse_mount "$IMG" "$MNT" -o allow_other "$@" || fail "mount failed ($status): $output"
}

umnt() {
	fuse_unmount "$MNT" || fail "sufs-fuse exited $?: $(cat "$T/fuse.log")"
}

# crash: kill the daemon with SIGKILL (a crash: what it had not written
# back is lost) and take away its dead mount
crash() {
	kill -9 "$FUSE_PID"
	wait "$FUSE_PID" || true
	FUSE_PID=
	fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"
}

# leaky_crash: files made and removed, one removed while open and synced
# that way (its inode on disk with no name: a leak), then a crash while it
# is still open
leaky_crash() {
	mkimg "$IMG" 64M
	mnt "$@"
	mkdir "$MNT/keep" "$MNT/gone"
	for i in $(seq 40); do echo "$i" >"$MNT/gone/f$i"; done
	echo kept >"$MNT/keep/file"
	python3 - "$MNT" <<-'EOF' &
	import os, sys, time
	d = sys.argv[1]
	fd = os.open(d + "/keep/held", os.O_CREAT | os.O_RDWR, 0o644)
	os.write(fd, os.urandom(300000))
	os.fsync(fd)
	os.unlink(d + "/keep/held")
	dfd = os.open(d + "/keep", os.O_RDONLY)
	os.fsync(dfd)                       # the name is gone on disk, the inode held
	open(d + "/ready", "w").close()
	time.sleep(60)
	EOF
	holder=$!
	for _ in $(seq 200); do [ -e "$MNT/ready" ] && break; sleep 0.05; done
	rm -rf "$MNT/gone"
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$MNT/keep/file"
	crash
	kill "$holder" 2>/dev/null || true
	wait "$holder" 2>/dev/null || true
}

# only_leaks: fsck.sufs -fn finds leaks and nothing else
only_leaks() {
	run "$FSCK" -fn --json "$IMG"
	[ "$status" -eq 0 ] || [ "$status" -eq 4 ] || fail "fsck.sufs -fn: $output"
	echo "$output" | jq -e '.problems | length > 0 and all(.leak)' >/dev/null ||
		fail "not only leaks: $output"
}

@test "kill -9 leaves only leaks; the image mounts again at once, the daemon's background check frees them" {
	require_cmd jq
	leaky_crash
	only_leaks
	# among them the file held open when its name went, with its data
	echo "$output" | jq -e '.problems | any(.message |
		test("^unattached inode [0-9]+ \\(size 300000\\)$"))' >/dev/null ||
		fail "the held file is not among the leaks: $output"
	run "$DUMP" -h "$IMG"
	assert_line --regexp '^Filesystem state: +not clean'
	mnt
	# fsck.sufs -b through the daemon waits for the mount's own check
	# (one at a time), then finds nothing left
	run "$FSCK" -b "$MNT"
	assert_success
	assert_equal "$(cat "$MNT/keep/file")" kept
	[ ! -e "$MNT/gone" ]
	umnt
	run cat "$T/fuse.log"
	assert_line --index 0 "sufs-fuse: $IMG: not unmounted cleanly: checking it in the background"
	assert_line --regexp "^sufs-fuse: $IMG: background check: "
	assert_line --regexp "^sufs-fuse: $IMG: background check done: [1-9][0-9]* leaks? freed\$"
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$DUMP" -h "$IMG"
	assert_line --regexp '^Filesystem state: +clean$'
}

@test "during the background check after a crash the daemon says at once where the image is mounted; fsck.sufs -b waits for the check" {
	leaky_crash
	mnt -o bgthrottle=256
	start=$(date +%s%N)
	run --separate-stderr "$DUMP" -h "$IMG"
	took=$((($(date +%s%N) - start) / 1000000))
	[[ $stderr == *"is mounted on $MNT (sufs-fuse, pid $FUSE_PID)"* ]] || fail "$stderr"
	[ "$took" -lt 2000 ] || fail "info took $took ms"
	grep -q "background check done" "$T/fuse.log" && skip "the check was done before the question"
	run "$FSCK" -b "$MNT"
	assert_success
	grep -q "background check done" "$T/fuse.log" || fail "fsck.sufs -b did not wait for the check"
	umnt
}

@test "with -o nobgcheck the leaks stay; fsck.sufs -b on the mount point, or on the image, frees them" {
	require_cmd jq
	leaky_crash
	mnt -o nobgcheck
	run "$FSCK" -b -n --json "$MNT"
	assert_failure 4
	echo "$output" | jq -e '.background and .counts.leaks > 0 and .counts.other == 0' >/dev/null ||
		fail "$output"
	run "$FSCK" -b -C 1 "$IMG"
	assert_failure 1
	assert_line --regexp "^5 [0-9]+ [0-9]+ $IMG\$"
	assert_line --regexp '^Unattached inode [0-9]+ \(size 300000\)\.$'
	run "$FSCK" -b "$IMG"
	assert_success
	umnt
	run grep -c 'background check' "$T/fuse.log"
	assert_output 0
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "fsck.sufs -b on a directory that no sufs-fuse mounts says so (exit 8)" {
	run --separate-stderr "$FSCK" -b "$T"
	assert_failure 8
	assert_equal "$stderr" "fsck.sufs: $T: a directory, and not the mount point of a sufs-fuse mount"
}

@test "an image left unclean in async mode is refused read-write (exit 2) and mounts read-only" {
	mkimg "$IMG" 32M
	mnt -o mode=async
	echo data >"$MNT/f"
	sync -f "$MNT/f"
	crash
	run --separate-stderr "$FUSE" -f "$IMG" "$MNT"
	assert_failure 2
	assert_equal "$stderr" "sufs-fuse: $IMG: cannot mount read-write: it was not unmounted cleanly after writes in async mode
sufs-fuse: $IMG: run a full check first: fsck.sufs -f $IMG (or mount it read-only: -o ro)"
	mnt -o ro
	ls "$MNT" >/dev/null
	umnt
	run "$FSCK" -fy "$IMG"
	mnt
	umnt
}

@test "a crash in sync mode mounts at once; its leaks wait for a full check, which the log says" {
	leaky_crash -o mode=sync
	mnt -o mode=sync
	assert_equal "$(cat "$MNT/keep/file")" kept
	umnt
	run cat "$T/fuse.log"
	assert_output --partial "not unmounted cleanly, and no background check: its write mode is sync"
	run "$FSCK" -fy "$IMG"
	[ "$status" -le 1 ] || fail "$output"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "sufs-snap create, list, info, export and delete on a mounted image go through the daemon" {
	mkimg "$IMG" 64M
	mnt
	mkdir "$MNT/docs"
	echo "before" >"$MNT/docs/note"
	run "$SNAP" create "$IMG" before
	assert_success
	# the kernel sees /.snap at once: nothing there is cached
	assert_equal "$(ls "$MNT/.snap")" before
	echo "after" >"$MNT/docs/note"
	rm -r "$MNT/docs"
	run "$SNAP" create "$MNT" before
	assert_failure 3
	assert_output "sufs-snap: $MNT: a snapshot named \"before\" exists already"
	run "$SNAP" list "$MNT"
	assert_success
	assert_line --index 1 --regexp '^before +[0-9T:Z-]+ +[0-9]+  ok$'
	run "$SNAP" export -q "$IMG" before "$T/then.img"
	assert_success
	run "$DEBUG" -R "cat /docs/note" "$T/then.img"
	assert_output before
	run "$SNAP" delete "$IMG" before
	assert_success
	assert_equal "$(ls -A "$MNT/.snap")" ""
	run "$SNAP" delete "$IMG" before
	assert_failure 3
	assert_output "sufs-snap: $IMG: no snapshot named \"before\""
	run "$SNAP" list --json "$IMG"
	assert_output "[]"
	umnt
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$FSCK" -fn "$T/then.img"
	assert_success
}

@test "sufs-snap export through the daemon draws its progress, and leaves nothing when interrupted" {
	mkimg "$IMG" 256M
	mnt
	head -c $((100 << 20)) /dev/urandom >"$MNT/big"
	"$SNAP" create "$IMG" s
	rm "$MNT/big"
	on_tty "$SNAP" export "$IMG" s "$T/out.img"
	assert_success
	assert_line 'Exporting: [########################################] 65536/65536'
	# interrupted once the temporary file is there (builtins only: a loop
	# that forks may see it only after a quick export has finished); on a
	# busy machine the export may still finish first: then it is tried
	# again, its output removed
	for attempt in 1 2 3 4 5; do
		rm -f "$T/out2.img"
		"$SNAP" export -q "$IMG" s "$T/out2.img" 2>"$T/export.err" &
		exporter=$!
		for _ in $(seq 200000); do
			tmp=("$T"/.sufs-snap.*)
			[ -e "${tmp[0]}" ] && break
		done
		kill -INT "$exporter" 2>/dev/null
		rc=0
		wait "$exporter" || rc=$?
		[ "$rc" = 0 ] || break
	done
	assert_equal "$rc" 4
	assert_equal "$(cat "$T/export.err")" "sufs-snap: $T/out2.img: interrupted; nothing was written"
	[ ! -e "$T/out2.img" ]
	[ -z "$(find "$T" -maxdepth 1 -name '.sufs-snap.*')" ] ||
		fail "a temporary file is left: $(ls -a "$T")"
	"$SNAP" delete "$IMG" s
	umnt
	run "$DEBUG" -R "stat /big" "$T/out.img"
	assert_line --partial "Size: $((100 << 20))"
	run "$FSCK" -fn "$T/out.img"
	assert_success
}

@test "the programs that read an image warn that a mounted one may be out of date; the writers name the mount" {
	mkimg "$IMG" 32M
	mnt
	warning="warning: $IMG is mounted on $MNT (sufs-fuse, pid $FUSE_PID): what is read may be out of date"
	run --separate-stderr "$DUMP" -h "$IMG"
	assert_success
	assert_equal "$stderr" "sufs-dump: $warning"
	run --separate-stderr "$DEBUG" -R "ls /" "$IMG"
	assert_success
	assert_equal "$stderr" "sufs-debug: $warning"
	run --separate-stderr "$FSCK" -fn "$IMG"
	assert_equal "$stderr" "fsck.sufs: $warning"
	run --separate-stderr "$DEBUG" -w -R "mkdir /x" "$IMG"
	assert_failure
	assert_equal "$stderr" "sufs-debug: cannot open $IMG: another program has it open for writing (sufs-fuse, pid $FUSE_PID, has it mounted on $MNT)"
	run --separate-stderr "$FSCK" -fy "$IMG"
	assert_failure 8
	[[ $stderr == *"(sufs-fuse, pid $FUSE_PID, has it mounted on $MNT)"* ]] || fail "$stderr"
	umnt
	run --separate-stderr "$DUMP" -h "$IMG"
	assert_equal "$stderr" ""
}

@test "the control channel serves root and the daemon's user, and tells anyone where the image is mounted" {
	require_cmd runuser
	# where nobody can reach the image and the mount point
	OPEN=$(mktemp -d /tmp/sufs-ctl.XXXXXX)
	chmod 755 "$OPEN"
	IMG=$OPEN/fs.img
	MNT=$OPEN/mnt
	mkdir "$MNT"
	mkimg "$IMG" 32M
	chmod 644 "$IMG"
	mnt
	run --separate-stderr runuser -u nobody -- "$FSCK" -b "$MNT"
	assert_failure 8
	[[ $stderr == *"Operation not permitted"* ]] || fail "$stderr"
	run runuser -u nobody -- "$SNAP" create "$MNT" s
	assert_failure 4
	assert_output --partial "Operation not permitted"
	run --separate-stderr runuser -u nobody -- "$DUMP" -h "$IMG"
	assert_success
	[[ $stderr == *"is mounted on $MNT (sufs-fuse"* ]] || fail "$stderr"
	umnt
}

@test "unmounting during the background check stops it, and the next mount checks again" {
	leaky_crash
	# a slow check: the snapshot read at 64 KiB/s
	mnt -o nobgcheck
	"$FSCK" -b --throttle 64 "$IMG" >"$T/check.out" 2>&1 &
	checker=$!
	sleep 0.5
	umnt
	wait "$checker" || rc=$?
	[ "${rc:-0}" -ne 0 ] || fail "the check was not stopped: $(cat "$T/check.out")"
	run "$DUMP" -h "$IMG"
	assert_line --regexp '^Filesystem state: +not clean'
	mnt
	run "$FSCK" -b "$MNT"
	assert_success
	umnt
	run "$FSCK" -fn "$IMG"
	assert_success
}

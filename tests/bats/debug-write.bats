#!/usr/bin/env bats
# sufs-debug -w: the modifying commands are the operations of sufs-replay's
# script language but snapshot and snapdelete, run from the current
# directory, each one a library call.

load helper

bats_require_minimum_version 1.5.0

setup() {
	IMG=$T/img
	mkimg "$IMG" 16M
}

w() { "$DEBUG" -w -f - "$IMG"; }

@test "SOURCE_DATE_EPOCH fixes the clock of what -w changes; a bad one is a usage error" {
	SOURCE_DATE_EPOCH=1700000000 run "$DEBUG" -w -R "mkdir /when" "$IMG"
	assert_success
	run "$DEBUG" -R "stat /when" "$IMG"
	assert_line --regexp '^ +ctime: 1700000000\.000000000 '
	assert_line --regexp '^ +mtime: 1700000000\.000000000 '
	SOURCE_DATE_EPOCH=soon run --separate-stderr "$DEBUG" -w -R "mkdir /x" "$IMG"
	assert_failure 1
	assert_equal "$stderr" "sufs-debug: invalid SOURCE_DATE_EPOCH 'soon': expected seconds since 1970 (digits)"
}

@test "command lines split as sufs-replay's scripts do: a comment after the words, quotes and escapes" {
	run --separate-stderr "$DEBUG" -w -R 'mkdir "/a b\x41" # and a comment' "$IMG"
	assert_success
	run "$DEBUG" -R "ls /" "$IMG"
	assert_line "a bA"
	run --separate-stderr "$DEBUG" -w -R 'mkdir "/\x4"' "$IMG"
	assert_failure 4
	[[ $stderr == "sufs-debug: \x needs two hex digits: "* ]]
	# the script's message names its operation once
	run --separate-stderr "$DEBUG" -w -R "utimes /nowhere 1 x" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: utimes: bad modification time x"
}

@test "every modifying command works through sufs-debug -w and the result is on disk" {
	run w <<'EOF2'
mkdir /d 0750
cd /d
create f 0600
write f 0 10000 3
mknod fifo p
mknod null c 1 3 0666
symlink f s
link f hard
rename hard moved
truncate f 5000
chmod 0640 f
chown 12:34 f
utimes f 1000000000 1100000000.5
fsync f
mkdir gone
rmdir gone
create tmp
unlink tmp
sync
EOF2
	assert_success
	run "$DEBUG" -R "ls -l /d" "$IMG"
	assert_success
	assert_line --regexp ' -rw-r-----  +2 +12 +34 +5000 .* f$'
	assert_line --regexp 'prw-r--r-- .* fifo$'
	assert_line --regexp 'crw-rw-rw- .* 1, +3 .* null$'
	assert_output --partial 's -> f'
	assert_line --regexp ' moved$'
	refute_output --partial gone
	refute_output --partial tmp
	run "$DEBUG" -R "stat /d/f" "$IMG"
	assert_output --partial "mtime: 1100000000.500000000"
	run "$DEBUG" -R "cat /d/moved" "$IMG"
	[ "${#output}" -eq 5000 ] || [ "$(printf '%s' "$output" | wc -c)" -le 5000 ]
}

@test "every script operation is a command but snapshot and snapdelete, and !ERRNO is not taken" {
	local op line
	for op in mkdir create mknod write truncate link unlink rename symlink rmdir \
		chmod chown utimes fsync sync; do
		run "$DEBUG" -R "help $op" "$IMG"
		assert_success
	done
	printf 'create /f\n' | w
	for line in "snapshot s1" "snapdelete s1" "!ENOENT unlink /f"; do
		run --separate-stderr "$DEBUG" -w -R "$line" "$IMG"
		assert_failure 4
		[ "$stderr" = "sufs-debug: ${line%% *}: unknown command (try help)" ]
	done
	run "$DEBUG" -R "ls /" "$IMG"
	assert_line f
	refute_line .snap
}

@test "aliases ln, mv and rm run the operations they name" {
	printf 'create /a\nln /a /b\nmv /b /c\nrm /a\n' | w
	run "$DEBUG" -R "ls /" "$IMG"
	assert_output --partial c
	refute_line a
	refute_line b
}

@test "modifying commands are refused without -w and the image is unchanged" {
	before=$(sha "$IMG")
	run "$DEBUG" -R "mkdir /x" "$IMG"
	assert_failure 4
	assert_output --partial "read-only"
	[ "$(sha "$IMG")" = "$before" ]
}

@test "each POSIX error of an operation is reported with its name and a non-zero status" {
	printf 'mkdir /d\ncreate /d/f\nmkdir /e\ncreate /e/x\n' | w
	# at the link limit (SUFS_LINK_MAX, 65,000): the counts set by hand
	printf 'set_inode_field /d/f links 65000\nset_inode_field /e links 65000\n' | w
	for line in "unlink /nope:ENOENT" "mkdir /d:EEXIST" "rmdir /e:ENOTEMPTY" \
		"create /d/f/x:ENOTDIR" "unlink /d:EISDIR" "rename /d /d/sub:EINVAL" \
		"rmdir /d/f:ENOTDIR" "create /$(printf 'n%.0s' {1..256}):ENAMETOOLONG" \
		"link /d/f /d/g:EMLINK" "mkdir /e/sub:EMLINK"; do
		cmd=${line%:*} err=${line##*:}
		run "$DEBUG" -w -R "$cmd" "$IMG"
		assert_failure 4
		assert_output --partial "($err)"
	done
}

@test "the -f run goes on after a failed command and exits 4" {
	run w <<'EOF2'
unlink /nope
mkdir /after
EOF2
	assert_failure 4
	run "$DEBUG" -R "ls /" "$IMG"
	assert_output --partial after
}

@test "a line with a NUL byte in it runs nothing, and the rest still run" {
	run sh -c 'printf "mkdir /a\\000 junk\\nmkdir /b\\n" | "$0" -w -f - "$1"' "$DEBUG" "$IMG"
	assert_failure 4
	assert_output --partial "sufs-debug: a NUL byte in the line"
	run "$DEBUG" -R "ls /" "$IMG"
	assert_line b
	refute_line a
}

@test "a bad line names the problem" {
	run "$DEBUG" -w -R "write /f zero 10" "$IMG"
	assert_failure 4
	assert_output --partial "sufs-debug: write:"
}

@test "running out of space is ENOSPC and what was made before stays" {
	mkimg "$IMG" 1M -b 1024
	run "$DEBUG" -w -R "create /big" "$IMG"
	assert_success
	run "$DEBUG" -w -R "write /big 0 2M 1" "$IMG"
	assert_failure 4
	assert_output --partial "(ENOSPC)"
	run "$DEBUG" -R "ls -l /" "$IMG"
	assert_output --partial big
}

@test "relative paths start at the current directory" {
	printf 'mkdir /a\ncd /a\nmkdir b\ncd b\ncreate c\n' | w
	run "$DEBUG" -R "ls /a/b" "$IMG"
	assert_line c
}

@test "<INO> paths: <INO> names an inode, <INO>/NAME an entry of that directory" {
	w <<<$'mkdir /a\ncreate /a/f\ncreate /a/g'
	local a f
	a=$("$DEBUG" -R "stat /a" "$IMG" | sed -n 's/^Inode: *\([0-9]*\).*/\1/p')
	f=$("$DEBUG" -R "stat /a/f" "$IMG" | sed -n 's/^Inode: *\([0-9]*\).*/\1/p')
	[ -n "$a" ] && [ -n "$f" ]
	run w <<EOF
write <$f> 0 10 1
chmod 600 <$f>
truncate <$f> 5
mkdir <$a>/b
create <$a>/b/c
link <$f> <$a>/b/hard
rename <$a>/g <2>/moved
unlink <$a>/b/hard
EOF
	assert_success
	run "$DEBUG" -R "ls -l <$a>" "$IMG"
	assert_line --regexp "^ +$f -rw------- +1 .* 5 .* f$"
	assert_line --regexp " b$"
	run "$DEBUG" -R "ls <$a>/b" "$IMG"
	assert_output "$(printf '.\n..\nc')"
	run "$DEBUG" -R "ls /" "$IMG"
	assert_line moved
	"$FSCK" -fn "$IMG"
	# <INO> alone names no entry; a number past the inodes, or a free
	# inode, names nothing
	run --separate-stderr "$DEBUG" -w -R "unlink <$f>" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: unlink \"<$f>\": Invalid argument (EINVAL)"
	run --separate-stderr "$DEBUG" -w -R "write <1000> 0 1" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: write \"<1000>\" 0 1: No such file or directory (ENOENT)"
	run --separate-stderr "$DEBUG" -w -R "create <4294967296>/x" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: create \"<4294967296>/x\": No such file or directory (ENOENT)"
	# in sufs-replay a path is a path: <2> is a name
	run "$REPLAY" "$IMG" - <<<'create <2>'
	assert_success
	run "$DEBUG" -R "ls ./<2>" "$IMG"
	assert_output "./<2>"
}

@test "space freed is space usable at the prompt too: a file written in the room of one just removed" {
	mkimg "$T/small.img" 4M
	run "$DEBUG" -w -f - "$T/small.img" <<<$'create /a\nwrite /a 0 3M 1\nsync\nunlink /a\ncreate /c\nwrite /c 0 2M 2'
	assert_success
	run "$FSCK" -fn "$T/small.img"
	assert_success
}

@test "write HOSTFILE PATH copies a host file in, as debugfs's write, holes kept; the script's write keeps its meaning" {
	head -c 10000 /dev/urandom >"$T/host"
	head -c 65536 /dev/zero >>"$T/host"
	printf tail >>"$T/host"
	chmod 640 "$T/host"
	run --separate-stderr "$DEBUG" -w -R "write $T/host /copy" "$IMG"
	assert_success
	"$DEBUG" -R "dump /copy $T/back" "$IMG"
	cmp "$T/host" "$T/back"
	run "$DEBUG" -R "stat /copy" "$IMG"
	assert_line --regexp "Mode: +0640 "
	assert_output --partial "Size: $((10000 + 65536 + 4))"
	# the zeros are holes: blocks 0 to 2 and 18 hold the data, with the
	# indirect block that maps 18; 15 are holes
	assert_line --regexp "Blockcount: 5$"
	# the file is there: refused, not overwritten
	run --separate-stderr "$DEBUG" -w -R "write $T/host /copy" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: write /copy: File exists"
	run --separate-stderr "$DEBUG" -w -R "write $T/nothere /x" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: write $T/nothere: No such file or directory"
	run --separate-stderr "$DEBUG" -w -R "write $T /x" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: write $T: is a directory"
	# three words or four: the script language's write
	w <<-'EOF2'
	create /p
	write /p 0 100 7
	EOF2
	run "$DEBUG" -R "stat /p" "$IMG"
	assert_output --partial "Size: 100"
	run --separate-stderr "$DEBUG" -w -R "write /p" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: write: usage: write HOSTFILE PATH | PATH OFFSET LENGTH [SEED]"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "punch frees a file's blocks from START to END, or to its end, and keeps its size" {
	w <<-'EOF2'
	create /f
	write /f 0 40K 3
	EOF2
	run "$DEBUG" -w -R "punch /f 2 4" "$IMG"
	assert_success
	run "$DEBUG" -R "filefrag -v /f" "$IMG"
	assert_line --regexp '^ +0 +0 +[0-9]+ +2$'
	assert_line --regexp '^ +1 +5 +[0-9]+ +5$'
	assert_line "/f: 2 contiguous extents, 7 blocks"
	"$DEBUG" -R "dump /f $T/f" "$IMG"
	[ "$(stat -c %s "$T/f")" -eq $((40 * 1024)) ]
	cmp <(head -c 8192 /dev/zero) <(dd if="$T/f" bs=4096 skip=2 count=2 status=none)
	run "$DEBUG" -w -R "punch /f 8" "$IMG"
	assert_success
	run "$DEBUG" -R "filefrag /f" "$IMG"
	assert_output "/f: 2 contiguous extents, 5 blocks"
	run --separate-stderr "$DEBUG" -w -R "punch / 0" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: punch /: Is a directory"
	run --separate-stderr "$DEBUG" -w -R "punch /f 5 2" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: punch 2: not a logical block number from 5 on"
	run --separate-stderr "$DEBUG" -R "punch /f 0" "$IMG"
	assert_failure 4
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "set_super_value uuid takes random, time and clear, as sufs-tune -U" {
	run "$DEBUG" -w -R "ssv uuid random" "$IMG"
	assert_success
	run "$DUMP" -h "$IMG"
	assert_line --regexp '^Filesystem UUID: +[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
	"$DEBUG" -w -R "ssv uuid time" "$IMG"
	run "$DUMP" -h "$IMG"
	assert_line --regexp '^Filesystem UUID: +[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-'
	"$DEBUG" -w -R "ssv uuid clear" "$IMG"
	run "$DUMP" -h "$IMG"
	assert_line --regexp '^Filesystem UUID: +00000000-0000-0000-0000-000000000000$'
	run --separate-stderr "$DEBUG" -w -R "ssv uuid nope" "$IMG"
	assert_failure 4
	[[ $stderr == *"not a UUID (8-4-4-4-12 hex digits, or random, time or clear)"* ]]
}

#!/usr/bin/env bats
# sufs-debug's editing commands: each changes the one field it names, the
# change is on disk when the debugger leaves, and fsck.sufs finds exactly
# that damage.

load helper

bats_require_minimum_version 1.5.0

setup() {
	IMG=$T/img
	mkimg "$IMG" 4M
	"$REPLAY" "$IMG" - <<'EOF'
mkdir /d
create /f
write /f 0 100000 1
create /d/e
write /d/e 0 10 2
link /f /d/h
symlink f /sl
mknod /fifo p
EOF
}

w() { "$DEBUG" -w -f - "$IMG"; }

# ino PATH: the inode number of PATH
ino() { "$DEBUG" -R "stat $1" "$IMG" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\) .*/\1/p'; }

# fsck_finds TEXT...: a -n check reports each TEXT, and nothing was changed
fsck_finds() {
	local before t
	before=$(sha "$IMG")
	run "$FSCK" -fn "$IMG"
	echo "$output"
	[ "$status" -eq 4 ]
	for t in "$@"; do
		[[ $output == *"$t"* ]] || { echo "missing: $t"; return 1; }
	done
	[ "$(sha "$IMG")" = "$before" ]
}

@test "the image is clean before any edit" {
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "set_inode_field sets a field by name, and the checksum follows" {
	run "$DEBUG" -w -R "set_inode_field /f links 5" "$IMG"
	assert_success
	run "$DEBUG" -R "stat /f" "$IMG"
	assert_output --partial "Links: 5"
	refute_output --partial "does not match"
	fsck_finds "Inode $(ino /f) link count is 5, should be 2"
}

@test "set_inode_field takes a number, <N> or a path, and debugfs's names" {
	f=$(ino /f)
	run w <<EOF
set_inode_field $f links_count 3
set_inode_field <$f> uid 77
sif /d/../f gid 0x10
set_inode_field /f mode 0100600
EOF
	assert_success
	run "$DEBUG" -R "stat /f" "$IMG"
	assert_output --partial "Links: 3"
	assert_output --partial "User:    77   Group:    16"
	assert_output --partial "Mode:  0600"
}

@test "set_inode_field sets block pointers by index, IND included" {
	run w <<'EOF'
set_inode_field /d/e block[3] 999
set_inode_field /d/e block[IND] 0
EOF
	assert_success
	run "$DEBUG" -R "stat /d/e" "$IMG"
	assert_output --partial "(3):999"
	fsck_finds "maps block #3 (999) past its size 10"
}

@test "set_inode_field sets times, signed, and every field listed" {
	run "$DEBUG" -w -R "set_inode_field /f mtime -1" "$IMG"
	assert_success
	run "$DEBUG" -w -R "set_inode_field /f mtime_ns 0" "$IMG"
	assert_success
	run "$DEBUG" -R "stat /f" "$IMG"
	assert_output --partial "mtime: -1.000000000"
	run "$DEBUG" -w -R "set_inode_field /f crtime_ns 5" "$IMG"
	assert_success
	run "$DEBUG" -R "stat /f" "$IMG"
	assert_output --partial "crtime: 1"
	assert_output --regexp "crtime: [0-9]+\.000000005"
	run "$DEBUG" -R "set_inode_field -l" "$IMG"
	assert_success
	for f in mode flags links uid gid size blocks atime mtime ctime crtime atime_ns mtime_ns \
		ctime_ns crtime_ns generation rdev_major rdev_minor "block\[0-14\]" checksum; do
		assert_line --regexp "^	$f  "
	done
}

@test "set_inode_field checksum writes the number given; calc computes it" {
	run "$DEBUG" -w -R "set_inode_field /f checksum 0x1234" "$IMG"
	assert_success
	run "$DEBUG" -R "stat /f" "$IMG"
	assert_output --partial "Inode checksum: 0x00001234 (does not match)"
	fsck_finds "Inode $(ino /f) checksum does not match its contents"
	run "$DEBUG" -w -R "set_inode_field /f checksum calc" "$IMG"
	assert_success
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "set_inode_field refuses bad fields, values and inodes" {
	run -4 "$DEBUG" -w -R "set_inode_field /f nosuch 1" "$IMG"
	assert_output --partial "set_inode_field nosuch: no such field (-l lists them)"
	run -4 "$DEBUG" -w -R "set_inode_field /f mode 65536" "$IMG"
	assert_output --partial "out of range (at most 65535)"
	run -4 "$DEBUG" -w -R "set_inode_field /f links -1" "$IMG"
	assert_output --partial "not a whole number"
	run -4 "$DEBUG" -w -R "set_inode_field /f links 12x" "$IMG"
	assert_output --partial "not a whole number"
	run -4 "$DEBUG" -w -R "set_inode_field /f block[15] 1" "$IMG"
	assert_output --partial "the index is out of range"
	run -4 "$DEBUG" -w -R "set_inode_field /f block[99999999999] 1" "$IMG"
	assert_output --partial "the index is out of range"
	run -4 "$DEBUG" -w -R "set_inode_field /f block[x] 1" "$IMG"
	assert_output --partial "the index is not a number"
	# an inode of no file type: cat says so, not "Invalid argument"
	"$DEBUG" -w -R "set_inode_field /f mode 0170644" "$IMG"
	run -4 --separate-stderr "$DEBUG" -R "cat /f" "$IMG"
	assert_equal "$stderr" "sufs-debug: cat /f: no valid file type (mode 0170644): nothing to read"
	"$DEBUG" -w -R "set_inode_field <$(ino /f)> mode 0100644" "$IMG"
	run -4 "$DEBUG" -w -R "set_inode_field /f block 1" "$IMG"
	assert_output --partial "give an index"
	run -4 "$DEBUG" -w -R "set_inode_field /f links[1] 1" "$IMG"
	assert_output --partial "not an array"
	run -4 "$DEBUG" -w -R "set_inode_field 0 links 1" "$IMG"
	assert_output --partial "no such inode (the image has 1 to 256)"
	run -4 "$DEBUG" -w -R "set_inode_field 257 links 1" "$IMG"
	assert_output --partial "no such inode"
	run -4 "$DEBUG" -w -R "set_inode_field /nope links 1" "$IMG"
	assert_output --partial "No such file or directory"
	run -4 "$DEBUG" -w -R "set_inode_field /f links" "$IMG"
	assert_output --partial "usage: set_inode_field [-l] INODE FIELD VALUE"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "editing commands need -w, but -l does not" {
	before=$(sha "$IMG")
	for c in "set_inode_field /f links 1" "set_super_value free_blocks 1" \
		"set_bg 0 free_blocks 1" "set_dirent / f inode 1" "setb 1" "freei 3" \
		"clri /f" "zap_block 100"; do
		run -4 "$DEBUG" -R "$c" "$IMG"
		assert_output --partial "the image is open read-only (use -w)"
	done
	for c in set_super_value set_inode_field set_bg set_dirent; do
		run "$DEBUG" -R "$c -l" "$IMG"
		assert_success
		assert_output --partial "fields supported"
	done
	[ "$(sha "$IMG")" = "$before" ]
}

@test "set_super_value changes the superblock on disk, checksum computed" {
	run w <<'EOF'
set_super_value free_blocks 0
set_super_value label hello
set_super_value uuid 01234567-89ab-cdef-0123-456789abcdef
super
EOF
	assert_success
	assert_output --partial "Free blocks:              0"
	run "$DEBUG" -R super "$IMG"
	assert_success
	assert_output --partial "Free blocks:              0"
	assert_output --partial 'Label:                    "hello"'
	assert_output --partial "UUID:                     01234567-89ab-cdef-0123-456789abcdef"
	fsck_finds "Superblock summary is wrong: free blocks 0"
}

@test "set_super_value state survives the close that marks the image clean" {
	run "$DEBUG" -w -R "set_super_value state 0" "$IMG"
	assert_success
	run "$DEBUG" -R super "$IMG"
	assert_output --partial "State:                    0 (not clean)"
	run "$FSCK" -n "$IMG"
	assert_success
	assert_output --partial "Pass 5"
}

@test "set_super_value checksum damages the superblock; the image no longer opens" {
	run "$DEBUG" -w -R "ssv checksum 1" "$IMG"
	assert_success
	run -2 "$DEBUG" -R super "$IMG"
	assert_output --partial "checksum does not match"
	assert_output --partial "the superblock is damaged, and a file system of one group keeps no backup of it"
	refute_output --partial "descriptor"
	fsck_finds "The superblock checksum does not match, and there is no good backup"
	# with backups, fsck.sufs is the way back
	mkimg "$IMG" 64M -b 1024
	"$DEBUG" -w -R "ssv checksum 1" "$IMG"
	run -2 "$DEBUG" -R super "$IMG"
	assert_output --partial "the superblock is damaged; fsck.sufs can rebuild it from a backup"
	run "$FSCK" -y "$IMG"
	run "$DEBUG" -R super "$IMG"
	assert_success
}

@test "set_super_value refuses bad fields and values, and lists the fields" {
	run -4 "$DEBUG" -w -R "set_super_value nosuch 1" "$IMG"
	assert_output --partial "no such field"
	run -4 "$DEBUG" -w -R "set_super_value inodes_count 4294967296" "$IMG"
	assert_output --partial "out of range (at most 4294967295)"
	run -4 "$DEBUG" -w -R "set_super_value uuid 1234" "$IMG"
	assert_output --partial "not a UUID"
	run -4 "$DEBUG" -w -R "set_super_value label $(printf 'x%.0s' $(seq 65))" "$IMG"
	assert_output --partial "too long"
	run -4 "$DEBUG" -w -R "set_super_value snap[20].ino 1" "$IMG"
	assert_output --partial "out of range"
	run "$DEBUG" -R "set_super_value -l" "$IMG"
	assert_line --regexp "^	snap\[0-19\]\.time +signed integer \(64 bits\)"
	assert_line --regexp "^	free_blocks +unsigned integer \(64 bits\)"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "set_super_value uuid null writes zeros" {
	run "$DEBUG" -w -R "set_super_value uuid null" "$IMG"
	assert_success
	run "$DEBUG" -R super "$IMG"
	assert_line --regexp "^UUID: +00000000-0000-0000-0000-000000000000$"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "editing commands refuse malformed field names, values and arguments, and damage nothing" {
	while IFS='|' read -r cmd msg; do
		run -4 --separate-stderr "$DEBUG" -w -R "$cmd" "$IMG"
		[ "$stderr" = "sufs-debug: $msg" ] || fail "$cmd: '$stderr'"
	done <<EOF
set_inode_field /f block[3 1|set_inode_field block[3: no such field (-l lists them)
set_inode_field /f block[] 1|set_inode_field block[]: no such field (-l lists them)
set_inode_field /f mode[IND] 1|set_inode_field mode[IND]: no such field (-l lists them)
set_inode_field /f $(printf 'x%.0s' $(seq 70)) 1|set_inode_field $(printf 'x%.0s' $(seq 70)): no such field (-l lists them)
set_inode_field /f mtime 1.5|set_inode_field 1.5: mtime: not a whole number
set_super_value snap[IND].ino 1|set_super_value snap[IND].ino: no such field (-l lists them)
set_super_value uuid 01234567-89ab-cdef-0123-456789abcdeX|set_super_value 01234567-89ab-cdef-0123-456789abcdeX: uuid: not a UUID (8-4-4-4-12 hex digits, or random, time or clear)
set_super_value label|set_super_value: usage: set_super_value [-l] FIELD VALUE
set_bg 0 nosuch 1|set_bg nosuch: no such field (-l lists them)
set_bg 0 free_blocks x|set_bg x: free_blocks: not a whole number (decimal, 0x hex or 0 octal)
set_bg 0 free_blocks|set_bg: usage: set_bg [-l] GROUP FIELD VALUE
set_dirent / f nosuch 1|set_dirent nosuch: no such field (-l lists them)
set_dirent / f inode x|set_dirent x: inode: not a whole number (decimal, 0x hex or 0 octal)
set_dirent / f name ''|set_dirent '': name: a name cannot be empty
set_dirent /nope f inode 1|set_dirent /nope: No such file or directory
set_dirent / f inode|set_dirent: usage: set_dirent [-l] DIR NAME FIELD VALUE
clri|clri: usage: clri INODE...
setb|setb: usage: set_bmap [-i] N [COUNT]
setb 5 x|setb x: not a count
seti x|seti x: not an inode number
zap_block|zap_block: usage: zap_block [-f PATH] BLOCK [OFFSET [LENGTH [PATTERN]]]
zap_block -f /nope 0|zap_block /nope: No such file or directory
zap_block -f /f x|zap_block x: not a logical block number
EOF
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "set_super_value sets a snapshot slot, which fsck clears" {
	run "$DEBUG" -w -R "set_super_value snap[2].ino $(ino /d)" "$IMG"
	assert_success
	fsck_finds "Snapshot slot 2 names inode $(ino /d), which is not a snapshot file (not a regular file in use)"
}

@test "set_bg changes a group descriptor, shown by groups and found by fsck" {
	run w <<'EOF'
set_bg 0 free_inodes 7
groups
EOF
	assert_success
	assert_line --regexp "^ +0 .* 7 +2 +0  ok$"
	fsck_finds "Group 0 summary is wrong: free blocks"
	run -4 "$DEBUG" -w -R "set_bg 1 free_inodes 7" "$IMG"
	assert_output --partial "group number out of range (at most 0)"
	run -4 "$DEBUG" -w -R "set_block_group 0 bogus 7" "$IMG"
	assert_output --partial "no such field"
}

@test "set_bg checksum makes a descriptor bad" {
	run "$DEBUG" -w -R "set_bg 0 checksum 0" "$IMG"
	assert_success
	fsck_finds "Group 0 descriptor is damaged (its checksum does not match)"
}

@test "an image that will not open for a bad descriptor names the descriptor, not the superblock" {
	cp "$IMG" "$T/zapped"
	run "$DEBUG" -w -R "set_bg 0 checksum 5" "$IMG"
	assert_success
	run -2 --separate-stderr "$DEBUG" -R super "$IMG"
	[ "$stderr" = "sufs-debug: cannot open $IMG: checksum does not match (group 0 descriptor)
sufs-debug: the descriptor of group 0 is damaged (a bad checksum, wrong locations or counts); fsck.sufs -f can rebuild it" ]
	# the descriptor table's block zeroed: the locations are wrong too
	run "$DEBUG" -w -R "zap_block 1" "$T/zapped"
	assert_success
	run -2 "$DEBUG" -R super "$T/zapped"
	assert_output --partial "the descriptor of group 0 is damaged"
	refute_output --partial "superblock"
}

@test "a bad superblock and a bad descriptor are both named" {
	run w <<'EOF'
set_bg 0 checksum 5
ssv checksum 1
EOF
	assert_success
	run -2 "$DEBUG" -R super "$IMG"
	assert_output --partial "the superblock is damaged"
	assert_output --partial "the descriptor of group 0 is damaged"
}

@test "a zapped descriptor table of many groups is counted, and fsck -f rebuilds it" {
	mkimg "$IMG" 32M -b 1024
	run "$DEBUG" -w -R "zap_block 2" "$IMG"
	assert_success
	run -2 "$DEBUG" -R super "$IMG"
	assert_output --partial "4 group descriptors are damaged (bad checksums, wrong locations or counts), the first of group 0; fsck.sufs -f can rebuild them"
	refute_output --partial "superblock"
	run -1 "$FSCK" -fy "$IMG"
	run "$DEBUG" -R groups "$IMG"
	assert_success
	refute_output --partial "BAD"
}

@test "set_dirent changes each field of an entry, and the block stays sealed" {
	e=$(ino /d/e)
	run w <<EOF
set_dirent /d e file_type 2
set_dirent / d name dd
set_dirent / sl inode $e
EOF
	assert_success
	run "$DEBUG" -R "ls /" "$IMG"
	assert_line dd
	refute_line d
	fsck_finds "Entry 'e' in directory inode $(ino /dd) has file type 2, should be 1" \
		"Inode $e link count is 1, should be 2"
	refute_output --partial "checksum does not match"
}

@test "set_dirent reclen and name_len make a malformed block" {
	run "$DEBUG" -w -R "set_dirent /d e reclen 3" "$IMG"
	assert_success
	fsck_finds "is malformed at byte"
}

@test "set_dirent edits '.' and '..'" {
	run "$DEBUG" -w -R "set_dirent /d .. inode $(ino /d)" "$IMG"
	assert_success
	fsck_finds "'..' in directory inode $(ino /d) is $(ino /d), should be 2"
}

@test "set_dirent refuses what it cannot do" {
	run -4 "$DEBUG" -w -R "set_dirent / nope inode 3" "$IMG"
	assert_output --partial "set_dirent nope: no such entry in /"
	run -4 "$DEBUG" -w -R "set_dirent /f x inode 3" "$IMG"
	assert_output --partial "Not a directory"
	run -4 "$DEBUG" -w -R "set_dirent / f name $(printf 'y%.0s' $(seq 20))" "$IMG"
	assert_output --partial "longer than the entry's rec_len"
	run -4 "$DEBUG" -w -R "set_dirent / f file_type 256" "$IMG"
	assert_output --partial "out of range (at most 255)"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "freeb and setb change block bitmap bits and nothing else" {
	blk=$("$DEBUG" -R "blocks /d/e" "$IMG")
	run w <<EOF
freeb $blk
setb 1000 3
EOF
	assert_success
	fsck_finds "Block $blk in use but marked free" "Blocks 1000-1002 marked in use but used by nothing"
	refute_output --partial "summary"
}

@test "set_bmap -i, seti and freei change inode bitmap bits" {
	run w <<EOF
set_bmap -i 100
seti 200 2
freei $(ino /f)
clear_bmap -i 201
EOF
	assert_success
	fsck_finds "Inode 100 marked in use but free" "Inode 200 marked in use but free" \
		"Inode $(ino /f) in use but marked free"
}

@test "set_bmap warns about a bit already set and refuses numbers out of range" {
	run "$DEBUG" -w -R "setb 0" "$IMG"
	assert_success
	assert_output --partial "warning: setb 0: block 0 is already marked in use"
	run -4 "$DEBUG" -w -R "setb 1024" "$IMG"
	assert_output --partial "block number out of range (at most 1023)"
	run -4 "$DEBUG" -w -R "freei 0" "$IMG"
	assert_output --partial "inode numbers start at 1"
	run -4 "$DEBUG" -w -R "freeb 1020 5" "$IMG"
	assert_output --partial "count out of range (1 to 4)"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "set_bmap of a run across a group boundary changes the bits of both groups" {
	mkimg "$IMG" 4M -g 256
	run "$DEBUG" -w -R "freeb 254 6" "$IMG"
	assert_success
	assert_output --partial "warning: freeb 254: block 254 is already marked free"
	refute_output --partial "block 256"
	run "$DEBUG" -R "testb 255 3" "$IMG"
	assert_output "$(printf 'Block %s not in use\n' 255 256 257)"
	fsck_finds "Blocks 256-259 in use but marked free"
	run "$DEBUG" -w -R "seti 60 10" "$IMG"
	assert_success
	run "$DEBUG" -R "ffi 2 60" "$IMG"
	assert_output "Free inodes found: 70 71"
	run "$DEBUG" -R "testi <65>" "$IMG"
	assert_output "Inode 65 is marked in use"
}

@test "clri goes on after an inode it cannot find, and fails" {
	sl=$(ino /sl)
	run -4 --separate-stderr "$DEBUG" -w -R "clri /nope <$sl>" "$IMG"
	[ "$stderr" = "sufs-debug: clri /nope: No such file or directory" ]
	run "$DEBUG" -R "stat <$sl>" "$IMG"
	assert_output --partial "Type: free"
}

@test "set_dirent of a directory whose block pointer is out of range fails and names the block" {
	"$DEBUG" -w -R "set_inode_field /d block[0] 99999" "$IMG"
	run -4 --separate-stderr "$DEBUG" -w -R "set_dirent /d e inode 3" "$IMG"
	[ "$stderr" = "sufs-debug: set_dirent /d: block 0: corrupt metadata" ]
}

@test "clri zeroes an inode and leaves its bitmap bit and names" {
	f=$(ino /fifo)
	run "$DEBUG" -w -R "clri /fifo" "$IMG"
	assert_success
	run "$DEBUG" -R "stat <$f>" "$IMG"
	assert_output --partial "Type: free"
	fsck_finds "Entry 'fifo' in directory inode 2 names free inode $f" \
		"Inode $f marked in use but free"
}

@test "zap_block overwrites a block, or a part of it, with a pattern" {
	run w <<'EOF'
zap_block -f /d 0 0 16 0xff
EOF
	assert_success
	fsck_finds "Directory inode $(ino /d) block #0" "is malformed at byte 0"
}

@test "zap_block of a directory block's tail breaks only its checksum" {
	run "$DEBUG" -w -R "zap -f / 0 4092 4 0x55" "$IMG"
	assert_success
	fsck_finds "Directory inode 2 block #0" "checksum does not match"
	refute_output --partial "malformed"
}

@test "zap_block of the superblock's block stays zapped after the close" {
	run "$DEBUG" -w -R "zap_block 0" "$IMG"
	assert_success
	run -2 "$DEBUG" -R super "$IMG"
	assert_output --partial "not a sufs file system"
}

@test "zap_block refuses offsets and lengths outside the block, and holes" {
	run -4 "$DEBUG" -w -R "zap_block 100 4096" "$IMG"
	assert_output --partial "byte offset out of range (at most 4095)"
	run -4 "$DEBUG" -w -R "zap_block 100 4000 97" "$IMG"
	assert_output --partial "length out of range (at most 96)"
	run -4 "$DEBUG" -w -R "zap_block 100 0 1 256" "$IMG"
	assert_output --partial "pattern byte out of range (at most 255)"
	run -4 "$DEBUG" -w -R "zap_block 1024" "$IMG"
	assert_output --partial "block number out of range"
	run -4 "$DEBUG" -w -R "zap_block -f /d/e 5" "$IMG"
	assert_output --partial "a hole in /d/e: no block to zap"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "a script of edits runs with -f; one failing edit fails the run, the others are made" {
	cat >"$T/edits" <<'EOF'
# damage for a test
set_inode_field /f links 9
set_inode_field /f nosuch 1
set_super_value free_inodes 1
EOF
	run -4 "$DEBUG" -w -f "$T/edits" "$IMG"
	assert_output --partial "nosuch: no such field"
	fsck_finds "link count is 9, should be 2" "Superblock summary is wrong"
}

@test "edits and operations mix in one session" {
	run w <<'EOF'
set_inode_field /f links 4
mkdir /new
create /new/x
set_dirent /new x file_type 7
sync
EOF
	assert_success
	fsck_finds "link count is 4, should be 2" "has file type 7, should be 1"
	refute_output --partial "checksum"
}

#!/usr/bin/env bats
# sufs-dump: the superblock, groups and inodes it shows, the checksums it
# checks, metadata images saved and restored, and bad input.

load helper

bats_require_minimum_version 1.5.0

# A small tree: a file, a directory, a fast and a slow symlink, a fifo, a
# file with an indirect block, a sparse file, and a device node when root.
mksrc() {
	local d=$1
	mkdir -p "$d/dir/sub"
	printf 'secret file data\n' >"$d/file"
	printf 'in a directory\n' >"$d/dir/inner"
	ln -s file "$d/fast-link"
	ln -s "$(printf 'y%.0s' $(seq 200))" "$d/slow-link"
	mkfifo "$d/fifo"
	head -c $((20 * 4096)) /dev/urandom >"$d/big"
	printf 'tail\n' | dd of="$d/sparse" bs=4096 seek=5000 status=none
	if [ "$(id -u)" -eq 0 ]; then
		mknod "$d/null" c 1 3
	fi
	touch -h -d @1700000000 "$d/fast-link" "$d/file" "$d"
}

setup() {
	mksrc "$T/src"
	IMG=$T/img
	mkimg "$IMG" 16M -L test -d "$T/src"
}

# jget EXPR: a value from the JSON on standard input, e.g. jget '["inode"]["ino"]'.
jget() {
	python3 -c 'import json, sys; print(eval("json.load(sys.stdin)" + sys.argv[1]))' "$1"
}

# poke IMG OFFSET: change the byte at OFFSET (to its complement).
poke() {
	local old
	old=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf '%03o' $((255 - old)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# same_output PROGRAM [ARGS...] IMG1 IMG2: PROGRAM ARGS succeeds on both
# images and prints the same for each (left in $output).
same_output() {
	local args=("${@:1:$#-2}") a=${*: -2:1} b=${*: -1}
	run "${args[@]}" "$a"
	assert_success
	[ -n "$output" ]
	local first=$output
	run "${args[@]}" "$b"
	assert_success
	assert_output "$first"
}

# ino_of IMG PATH: the inode number PATH names.
ino_of() {
	"$DUMP" --json -i "$2" "$1" | jget '["inode"]["ino"]'
}

# inode_offset IMG INO: byte offset of inode INO (in group 0) in the image.
inode_offset() {
	local bs itable
	bs=$("$DUMP" --json -h "$1" | jget '["superblock"]["block_size"]')
	itable=$("$DUMP" --json -g "$1" | jget '["groups"][0]["inode_table"][0]')
	echo $((itable * bs + ($2 - 1) * 256))
}

@test "sufs-dump --help prints the usage and exits 0" {
	run "$DUMP" --help
	assert_success
	assert_output --partial "Usage: sufs-dump [-h | -g | -i INODE] [--json] [-s BLOCK] IMAGE"
	assert_output --partial "See sufs-dump(8)."
	assert_output --partial "--restore META"
}

@test "sufs-dump --version prints the version" {
	run "$DUMP" --version
	assert_success
	assert_output --regexp '^sufs-dump \(sufs\) [0-9]+\.[0-9]+'
	run "$DUMP" -V
	assert_success
	assert_output --regexp '^sufs-dump \(sufs\) [0-9]+\.[0-9]+'
}

@test "the default output shows the superblock, every group and what was checked" {
	run --separate-stderr "$DUMP" "$IMG"
	assert_success
	[ -z "$stderr" ]
	assert_line "Filesystem volume name:   test"
	assert_line "Filesystem magic number:  0x53465553"
	assert_line "Block size:               4096"
	assert_line "Block count:              4096"
	assert_line --regexp '^Superblock checksum: +0x[0-9a-f]{8} \(ok\)$'
	assert_line --regexp '^Group 0: \(Blocks 0-4095\) checksum 0x[0-9a-f]{8} \(ok\)$'
	assert_line "  Primary superblock at 0, Group descriptors at 1-1"
	assert_line --regexp '^  Free blocks: ([0-9]+(-[0-9]+)?, )*[0-9]+-4095$'
	# every inode in use (the reserved inode 1 too) and the blocks of /, /dir, /dir/sub
	used=$((1024 - $(echo "$output" | sed -n 's/^Free inodes: *//p')))
	assert_line "Checksums checked: superblocks 1, group descriptors 1, inodes $used, directory blocks 3, attribute blocks 0"
	assert_line "Checksum failures: 0"
}

@test "the free runs follow the bitmaps and the summary counts" {
	run "$DUMP" --json "$IMG"
	assert_success
	# the free blocks the bitmap shows add up to the group's summary count
	echo "$output" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for g in d["groups"]:
    free = sum(b - a + 1 for a, b in g["free_blocks_list"])
    assert free == g["free_blocks"], (free, g["free_blocks"])
    free = sum(b - a + 1 for a, b in g["free_inodes_list"])
    assert free == g["free_inodes"], (free, g["free_inodes"])
assert d["superblock"]["free_blocks"] == sum(g["free_blocks"] for g in d["groups"])
'
}

@test "-h prints the superblock and nothing of the groups" {
	run "$DUMP" -h "$IMG"
	assert_success
	assert_line "Inode size:               256"
	assert_line "Root inode:               2"
	refute_output --partial "Group 0"
	refute_output --partial "Checksums checked"
	[ "${lines[-1]%%:*}" = "Superblock checksum" ]
}

@test "-g prints a header and one line per group" {
	mkimg "$T/groups" 16M -g 512
	run "$DUMP" -g "$T/groups"
	assert_success
	[ "${#lines[@]}" -eq 9 ]
	assert_line --index 0 --regexp '^group +blocks +free_blocks +free_inodes +dirs +block_bitmap +inode_bitmap +inode_table +checksum$'
	assert_line --index 1 --regexp '^0 +0-511 +[0-9]+ +[0-9]+ +1 +2 +3 +4-[0-9]+ +ok$'
	assert_line --index 2 --regexp '^1 +512-1023 +[0-9]+ +[0-9]+ +0 +513 +514 +515-[0-9]+ +ok$'
	assert_line --index 8 --regexp '^7 +3584-4095 '
}

@test "-i shows every field of a regular file and the blocks it maps" {
	run "$DUMP" -i /file "$IMG"
	assert_success
	assert_line --regexp '^Inode: [0-9]+   Type: regular file   Mode: 0644   Flags: 0x0$'
	assert_line --regexp '^In use: yes   Links: 1   Generation: [0-9]+$'
	assert_line "Size: 17   Blocks: 1"
	assert_line --regexp '^mtime:  2023-11-1[45] [0-9:]{8}\.000000000 [-+][0-9]{4}$'
	assert_line --regexp '^ctime:  [0-9-]{10} [0-9:]{8}\.[0-9]{9} [-+][0-9]{4}$'
	assert_line --regexp '^atime: '
	assert_line --regexp '^crtime: '
	assert_line --regexp '^Block pointers: [1-9][0-9]* 0 0 0 0 0 0 0 0 0 0 0; indirect 0, double 0, triple 0$'
	assert_line --regexp '^Mapped blocks: \(0\):[0-9]+$'
	assert_line --regexp '^Checksum: 0x[0-9a-f]{8} \(ok\)$'
}

@test "-i follows indirect blocks and holes of a file" {
	run "$DUMP" -i /big "$IMG"
	assert_success
	assert_line "Size: 81920   Blocks: 21"
	assert_line --regexp '^Mapped blocks: \(0-11\):[0-9]+-[0-9]+, \(IND\):[0-9]+, \(12-19\):[0-9]+-[0-9]+$'
	run "$DUMP" -i /sparse "$IMG"
	assert_success
	assert_line --regexp '^Mapped blocks: \(DIND\):[0-9]+, \(IND\):[0-9]+, \(5000\):[0-9]+$'
}

@test "-i shows a directory by number and by path alike" {
	ino=$(ino_of "$IMG" /dir)
	run "$DUMP" -i "$ino" "$IMG"
	assert_success
	assert_line --regexp "^Inode: $ino   Type: directory   Mode: 0755 "
	assert_line --regexp '^In use: yes   Links: 3 '
	assert_line "Size: 4096   Blocks: 1"
	bynum=$output
	run "$DUMP" -i /dir "$IMG"
	assert_output "$bynum"
}

@test "-i shows the target of a fast symlink and of a slow one" {
	run "$DUMP" -i /fast-link "$IMG"
	assert_success
	assert_line --regexp '^Inode: [0-9]+   Type: symlink   Mode: 0777 '
	assert_line 'Fast symlink target: "file"'
	refute_line --partial "Block pointers"
	run "$DUMP" -i /slow-link "$IMG"
	assert_success
	assert_line "Slow symlink target: \"$(printf 'y%.0s' $(seq 200))\""
	assert_line --regexp '^Mapped blocks: \(0\):[0-9]+$'
}

@test "-i shows a device node's number and a fifo's type" {
	require_root
	run "$DUMP" -i /null "$IMG"
	assert_success
	assert_line --regexp '^Inode: [0-9]+   Type: character device   Mode: 0[0-7]{3} '
	assert_line "Device: 1, 3"
	assert_line "Mapped blocks: (none)"
	run "$DUMP" --json -i /null "$IMG"
	assert_success
	[ "$(echo "$output" | jget '["inode"]["rdev_major"]')" = 1 ]
	[ "$(echo "$output" | jget '["inode"]["rdev_minor"]')" = 3 ]
	run "$DUMP" -i /fifo "$IMG"
	assert_success
	assert_line --regexp '^Inode: [0-9]+   Type: fifo '
}

@test "-i of a slow symlink whose block is out of range shows the target as unreadable and exits 16" {
	ino=$(ino_of "$IMG" /slow-link)
	"$DEBUG" -w -R "sif $ino block[0] 99999" "$IMG"
	run --separate-stderr "$DUMP" -i /slow-link "$IMG"
	assert_failure 16
	assert_line "Slow symlink target: (unreadable: corrupt metadata)"
	assert_line "Mapped blocks: (0):99999 (out of range)"
	assert_equal "$stderr" "sufs-dump: $IMG: symlink inode $ino: corrupt metadata"
	run --separate-stderr "$DUMP" --json -i /slow-link "$IMG"
	assert_failure 16
	run python3 -c 'import json, sys; i = json.load(sys.stdin)["inode"]; print(i["fast_symlink"], "target" in i, i["target_error"])' <<<"$output"
	assert_output "False False corrupt metadata"
}

@test "-i shows a free inode as not in use" {
	run "$DUMP" -i 1000 "$IMG"
	assert_success
	assert_line --regexp '^Inode: 1000   Type: none   Mode: 0000 '
	assert_line --regexp '^In use: no '
}

@test "--json output parses in every mode" {
	for args in "" "-h" "-g" "-i 2" "-i /file" "-i /slow-link" "-i /fifo"; do
		# shellcheck disable=SC2086
		"$DUMP" --json $args "$IMG" >"$T/out.json"
		python3 -m json.tool "$T/out.json" >/dev/null
	done
	run jget '["inode"]["type"]' <"$T/out.json"
	assert_output "fifo"
}

@test "--json shows the same fields as the text" {
	run "$DUMP" --json -i /slow-link "$IMG"
	assert_success
	json=$output
	[ "$(echo "$json" | jget '["inode"]["fast_symlink"]')" = False ]
	[ "$(echo "$json" | jget '["inode"]["target"]')" = "$(printf 'y%.0s' $(seq 200))" ]
	[ "$(echo "$json" | jget '["inode"]["perm"]')" = "0777" ]
	[ "$(echo "$json" | jget '["inode"]["mapped"][0]["count"]')" = 1 ]
	[ "$(echo "$json" | jget '["checksum_failures"]')" = "[]" ]
	run "$DUMP" --json "$IMG"
	[ "$(echo "$output" | jget '["superblock"]["label"]')" = test ]
	[ "$(echo "$output" | jget '["superblock"]["blocks_count"]')" = 4096 ]
	[ "$(echo "$output" | jget '["groups"][0]["checksum_ok"]')" = True ]
}

@test "a label of any bytes stays valid JSON and safe text" {
	mkimg "$T/label" 16M -L "$(printf 'a"b\\c\td\001\xff\xc3\xa9')"
	run "$DUMP" --json -h "$T/label"
	assert_success
	run jget '["superblock"]["label"]' <<<"$output"
	assert_output "$(printf 'a"b\\c\td\001\xc3\xbf\xc3\xa9')"
	run "$DUMP" -h "$T/label"
	assert_line 'Filesystem volume name:   a"b\\c\td\x01\xffé'
}

@test "a label in 3- and 4-byte UTF-8 is shown as it is, and broken sequences byte by byte" {
	# valid: U+20AC, U+1F600; broken: an overlong '/', a surrogate, a code
	# point above U+10FFFF, a bad continuation byte; valid but a C1
	# control: U+0085; cut short by the end of the label: U+1F600's first 3
	mkimg "$T/label" 16M -L "$(printf '\xe2\x82\xac\xf0\x9f\x98\x80\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2A\xc2\x85\xf0\x9f\x98')"
	run "$DUMP" -h "$T/label"
	assert_success
	assert_line 'Filesystem volume name:   €😀\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2A\xc2\x85\xf0\x9f\x98'
	run "$DUMP" --json -h "$T/label"
	assert_success
	run python3 -c 'import json, sys; print(ascii(json.load(sys.stdin)["superblock"]["label"]))' <<<"$output"
	assert_output "'\\u20ac\\U0001f600\\xc0\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80\\xe2A\\x85\\xf0\\x9f\\x98'"
}

@test "superblock and group flags, snapshots and a group with nothing free show in text and JSON" {
	"$SNAP" create "$IMG" first
	"$DEBUG" -w -R "ssv flags 0x80000001" "$IMG"
	"$DEBUG" -w -R "set_bg 0 flags 5" "$IMG"
	run "$DUMP" "$IMG"
	assert_success
	assert_line "Filesystem flags:         needs_fsck 0x80000000"
	assert_line --regexp '^Snapshot 0: +inode ([0-9]+), flags 0x0, taken [0-9-]{10} [0-9:]{8} [-+][0-9]{4}$'
	ino=$(echo "$output" | sed -n 's/^Snapshot 0: *inode \([0-9]*\),.*/\1/p')
	assert_line --regexp '^  [0-9]+ free blocks, [0-9]+ free inodes, [0-9]+ directories, flags 0x5$'
	run "$DUMP" --json "$IMG"
	assert_success
	run python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["superblock"]
print(s["flags"], s["flag_names"], [(x["slot"], x["ino"], x["flags"]) for x in s["snapshots"]],
      d["groups"][0]["flags"])' <<<"$output"
	assert_output "2147483649 ['needs_fsck'] [(0, $ino, 0)] 5"
	# every inode marked in use: no free run to show
	"$DEBUG" -w -R "set_bmap -i 1 1024" "$IMG" 2>/dev/null
	run "$DUMP" "$IMG"
	assert_line "  Free inodes: (none)"
	run "$DUMP" --json "$IMG"
	[ "$(echo "$output" | jget '["groups"][0]["free_inodes_list"]')" = "[]" ]
}

@test "a time the C library cannot show as a date is shown in seconds" {
	printf '%s\n' "sif 2 mtime 9223372036854775807" "sif 2 mtime_ns 5" \
		"ssv mount_time 9223372036854775807" >"$T/cmds"
	"$DEBUG" -w -f "$T/cmds" "$IMG"
	run "$DUMP" -i 2 "$IMG"
	assert_success
	assert_line "mtime:  9223372036854775807.000000005"
	run "$DUMP" -h "$IMG"
	assert_success
	assert_line "Last mount time:          9223372036854775807"
	run "$DUMP" --json -i 2 "$IMG"
	[ "$(echo "$output" | jget '["inode"]["mtime"]')" = 9223372036854775807 ]
}

@test "-i shows a block pointer out of range as such, and wraps a long list of runs" {
	ino=$(ino_of "$IMG" /big)
	"$DEBUG" -w -R "sif $ino block[3] 99999" "$IMG"
	"$DEBUG" -w -R "sif $ino block[12] 99998" "$IMG"
	run "$DUMP" -i /big "$IMG"
	assert_success
	assert_line --regexp '^Mapped blocks: \(0-2\):[0-9]+-[0-9]+, \(3\):99999 \(out of range\), \(4-11\):[0-9]+-[0-9]+,$'
	assert_line " (IND):99998 (out of range)"
	run "$DUMP" --json -i /big "$IMG"
	run python3 -c '
import json, sys
print([(m["level"], m["lblk"], m["pblk"]) for m in json.load(sys.stdin)["inode"]["mapped"] if m.get("bad")])' <<<"$output"
	assert_output "[(0, 3, 99999), (1, 12, 99998)]"
	# a directory's block out of range is shown, not read as a directory block
	"$DEBUG" -w -R "sif 2 block[1] 99997" "$IMG"
	run --separate-stderr "$DUMP" "$IMG"
	assert_success
	assert_line --regexp '^Checksums checked: superblocks 1, group descriptors 1, inodes [0-9]+, directory blocks 3, attribute blocks 0$'
	assert_equal "$stderr" ""
}

@test "a damaged superblock checksum is reported and the exit status is 4" {
	poke "$IMG" $((1024 + 128))
	run --separate-stderr "$DUMP" -h "$IMG"
	[ "$status" -eq 4 ]
	assert_line --regexp '^Superblock checksum: +0x[0-9a-f]{8} \(BAD, computed 0x[0-9a-f]{8}\)$'
	[[ $stderr =~ ^sufs-dump:\ .*/img:\ superblock:\ checksum\ does\ not\ match\ \(stored\ 0x[0-9a-f]{8},\ computed\ 0x[0-9a-f]{8}\)$ ]]
	run --separate-stderr "$DUMP" --json -h "$IMG"
	[ "$status" -eq 4 ]
	[ "$(echo "$output" | jget '["checksum_failures"][0]["what"]')" = superblock ]
	[ "$(echo "$output" | jget '["superblock"]["checksum_ok"]')" = False ]
}

@test "the checksum field itself damaged is reported too" {
	poke "$IMG" $((1024 + 1020))
	run "$DUMP" -h "$IMG"
	[ "$status" -eq 4 ]
	assert_output --partial "superblock: checksum does not match"
}

# readers_refuse IMAGE SHOWN WHY: sufs-dump, sufs-snap, sufs-replay and
# sufs-debug refuse IMAGE (exit 2), first saying "SHOWN: WHY" (as they show its
# name: "cannot open SHOWN: WHY" for the last two).
readers_refuse() {
	local img=$1 name=$2 why=$3
	run --separate-stderr "$DUMP" -h "$img"
	assert_failure 2
	assert_equal "${stderr%%$'\n'*}" "sufs-dump: $name: $why"
	run --separate-stderr "$SNAP" list "$img"
	assert_failure 2
	assert_equal "${stderr%%$'\n'*}" "sufs-snap: $name: $why"
	run --separate-stderr "$REPLAY" "$img" /dev/null
	assert_failure 2
	assert_equal "${stderr%%$'\n'*}" "sufs-replay: cannot open $name: $why"
	run --separate-stderr "$DEBUG" -R stats "$img"
	assert_failure 2
	assert_equal "${stderr%%$'\n'*}" "sufs-debug: cannot open $name: $why"
}

@test "an empty image name is shown as '' by every program" {
	readers_refuse "" "''" "No such file or directory"
	run --separate-stderr "$FSCK" -n ""
	assert_equal "$stderr" "fsck.sufs: '': No such file or directory (opening the image)"
	run --separate-stderr "$MKFS" ""
	assert_equal "${stderr%%$'\n'*}" "mkfs.sufs: '' does not exist: give a SIZE to create it"
}

@test "a superblock field out of range is named by every program that opens the image" {
	"$DEBUG" -w -R "ssv inode_size 300" "$IMG"
	readers_refuse "$IMG" "$IMG" "corrupt metadata (superblock field inode_size)"
	run "$FSCK" -n "$IMG"
	assert_output --partial "(inode_size)"
}

@test "a damaged inode checksum is reported by the full output and by -i" {
	ino=$(ino_of "$IMG" /file)
	poke "$IMG" $(($(inode_offset "$IMG" "$ino") + 8))
	run --separate-stderr "$DUMP" "$IMG"
	[ "$status" -eq 4 ]
	assert_line "Checksum failures: 1"
	[[ $stderr == *"inode $ino: checksum does not match"* ]]
	run "$DUMP" -h "$IMG"
	assert_success
	run "$DUMP" -i "$ino" "$IMG"
	[ "$status" -eq 4 ]
	assert_line --regexp '^Checksum: 0x[0-9a-f]{8} \(BAD, computed 0x[0-9a-f]{8}\)$'
	# the damaged inode is still found by its path, and shown as it is
	run "$DUMP" -i /file "$IMG"
	[ "$status" -eq 4 ]
	assert_line --regexp "^Inode: $ino   Type: regular file "
	assert_line --regexp '^UID: [1-9][0-9]*   GID: 0$'
	run --separate-stderr "$DUMP" --json -g "$IMG"
	[ "$status" -eq 4 ]
	[ "$(echo "$output" | jget '["checksum_failures"][0]["ino"]')" = "$ino" ]
}

@test "a damaged directory block is reported with its directory and block" {
	blk=$("$DUMP" --json -i /dir "$IMG" | jget '["inode"]["block"][0]')
	ino=$(ino_of "$IMG" /dir)
	poke "$IMG" $((blk * 4096 + 40))
	run --separate-stderr "$DUMP" "$IMG"
	[ "$status" -eq 4 ]
	[[ $stderr == *"directory inode $ino, block $blk (logical 0): checksum does not match"* ]]
	run "$DUMP" -i /dir "$IMG"
	[ "$status" -eq 4 ]
}

@test "a damaged group descriptor is reported by -g" {
	poke "$IMG" $((4096 + 8))
	run --separate-stderr "$DUMP" -g "$IMG"
	[ "$status" -eq 4 ]
	assert_line --index 1 --regexp ' BAD$'
	[[ $stderr == *"group 0 descriptor: checksum does not match"* ]]
}

@test "a descriptor whose checksum matches but whose locations are wrong shows them, not a bad checksum" {
	"$DEBUG" -w -R "set_bg 0 inode_table 12345" "$IMG"
	run --separate-stderr "$DUMP" "$IMG"
	assert_success
	assert_line --regexp '^Group 0: .* checksum 0x[0-9a-f]{8} \(ok\)$'
	assert_line --partial "Inode table at 12345 (geometry says "
	assert_equal "$stderr" ""
	run "$DUMP" --json "$IMG"
	assert_success
	[ "$(echo "$output" | python3 -c 'import json,sys; g=json.load(sys.stdin)["groups"][0]; print(g["locations_ok"], g["checksum_ok"])')" = "False True" ]
}

@test "a damaged backup superblock is reported with its group" {
	mkimg "$T/groups" 16M -g 512
	poke "$T/groups" $((512 * 4096 + 128))
	run --separate-stderr "$DUMP" "$T/groups"
	[ "$status" -eq 4 ]
	assert_line "  Backup superblock at 512, checksum BAD"
	assert_line "  Backup superblock at 1536, checksum ok"
	[[ $stderr == *"backup superblock of group 1 (block 512): checksum does not match"* ]]
}

@test "a directory block whose tail is damaged but whose checksum matches is reported as such" {
	blk=$("$DUMP" --json -i /dir "$IMG" | jget '["inode"]["block"][0]')
	ino=$(ino_of "$IMG" /dir)
	poke "$IMG" $((blk * 4096 + 4096 - 8))
	run --separate-stderr "$DUMP" "$IMG"
	[ "$status" -eq 4 ]
	assert_equal "$stderr" "sufs-dump: $IMG: directory inode $ino, block $blk (logical 0): checksum tail is damaged"
	run --separate-stderr "$DUMP" --json -i /dir "$IMG"
	[ "$status" -eq 4 ]
	run python3 -c '
import json, sys
p = json.load(sys.stdin)["checksum_failures"]
print([(x["what"], x["ino"], x["block"], x["lblk"], x["stored"] == x["computed"]) for x in p])' <<<"$output"
	assert_output "[('directory_block', $ino, $blk, 0, True)]"
}

@test "--json names the group and the block of each failed descriptor and backup superblock" {
	mkimg "$T/groups" 16M -g 512
	poke "$T/groups" $((512 * 4096 + 128))
	poke "$T/groups" $((4096 + 64 + 8))
	run --separate-stderr "$DUMP" "$T/groups"
	[ "$status" -eq 4 ]
	assert_line --regexp '^Group 1: \(Blocks 512-1023\) checksum 0x[0-9a-f]{8} \(BAD, computed 0x[0-9a-f]{8}\)$'
	run --separate-stderr "$DUMP" --json "$T/groups"
	[ "$status" -eq 4 ]
	run python3 -c '
import json, sys
d = json.load(sys.stdin)
print([(p["what"], p.get("group"), p.get("block")) for p in d["checksum_failures"]])
print([g.get("superblock_checksum_ok") for g in d["groups"]])' <<<"$output"
	assert_line --index 0 "[('group_descriptor', 1, None), ('backup_superblock', 1, 512)]"
	assert_line --index 1 "[None, False, None, True, None, True, None, True]"
}

@test "-m then --restore gives an image that dumps and lists the same" {
	run "$DUMP" -m "$T/meta" "$IMG"
	assert_success
	assert_output ""
	run "$DUMP" --restore "$T/meta" "$T/restored"
	assert_success
	[ "$(stat -c %s "$T/restored")" -eq "$(stat -c %s "$IMG")" ]
	same_output "$DUMP" "$IMG" "$T/restored"
	same_output "$DUMP" --json -i /sparse "$IMG" "$T/restored"
	same_output "$DEBUG" -R "ls -l /" "$IMG" "$T/restored"
	assert_line --regexp ' slow-link -> y{200}$'
	same_output "$DEBUG" -R "ls -l /dir" "$IMG" "$T/restored"
	assert_line --regexp ' inner$'
}

@test "a restored image is sparse and its files read as zeros" {
	"$DUMP" -m "$T/meta" "$IMG"
	"$DUMP" --restore "$T/meta" "$T/restored"
	# the metadata of a 16M image takes a few blocks, the file data none
	[ "$(du -k "$T/restored" | cut -f1)" -lt 200 ]
	run "$DEBUG" -R "cat /file" "$T/restored"
	assert_success
	[ "$(printf '%s' "$output" | tr -d '\0' | wc -c)" -eq 0 ]
	[ "$("$DEBUG" -R "cat /file" "$T/restored" | wc -c)" -eq 17 ]
	run ! grep -q "secret file data" "$T/restored"
	grep -q "secret file data" "$IMG"
}

@test "-m and --restore keep a multi-group image with 1K blocks" {
	mkimg "$T/small" 16M -b 1024 -g 2048 -d "$T/src"
	"$DUMP" -m "$T/meta" "$T/small"
	"$DUMP" --restore "$T/meta" "$T/restored"
	same_output "$DUMP" "$T/small" "$T/restored"
	same_output "$DUMP" -i /sparse "$T/small" "$T/restored"
}

@test "-m keeps what a descriptor whose locations run past the end of the image names, as far as the image goes" {
	printf '%s\n' "set_bg 0 block_bitmap 99999" "set_bg 0 inode_table 4090" >"$T/cmds"
	"$DEBUG" -w -f "$T/cmds" "$IMG"
	run "$DUMP" -g "$IMG"
	assert_line --index 1 --regexp ' 99999 +3 +4090-4153 +ok$'
	# a free block where the descriptor says the inode table is: saved
	printf 'in the table the descriptor names' | dd of="$IMG" bs=4096 seek=4093 conv=notrunc status=none
	"$DUMP" -m "$T/meta" "$IMG"
	"$DUMP" --restore "$T/meta" "$T/restored"
	same_output "$DUMP" "$IMG" "$T/restored"
	assert_line "  Inode table at 4090 (geometry says 4)-4153"
	cmp "$IMG" "$T/restored" $((4093 * 4096)) $((4093 * 4096))
}

@test "-m saves an image whose checksums fail, and the failures survive" {
	poke "$IMG" $((1024 + 128))
	run "$DUMP" -m "$T/meta" "$IMG"
	assert_success
	"$DUMP" --restore "$T/meta" "$T/restored"
	run "$DUMP" -h "$T/restored"
	[ "$status" -eq 4 ]
	assert_output --partial "superblock: checksum does not match"
}

@test "-m and --restore on a terminal show bars of the inodes scanned and the blocks saved, restored" {
	mkimg "$T/many.img" 16M
	for i in $(seq 100); do echo "mkdir /d$i"; done | "$REPLAY" "$T/many.img" -
	on_tty "$DUMP" -m "$T/meta" "$T/many.img"
	assert_success
	assert_line --regexp '^Scanning inodes: \[#{40}\] ([0-9]+)/\1$'
	assert_line --index -1 --regexp '^Saving metadata: \[#{40}\] ([0-9]+)/\1$'
	on_tty "$DUMP" --restore "$T/meta" "$T/restored"
	assert_success
	assert_line --index -1 --regexp '^Restoring metadata: \[#{40}\] ([0-9]+)/\1$'
}

@test "-m and --restore refuse to overwrite a file unless -f is given" {
	echo keep >"$T/meta"
	run "$DUMP" -m "$T/meta" "$IMG"
	[ "$status" -eq 8 ]
	assert_output --partial "exists (use -f to replace it)"
	[ "$(cat "$T/meta")" = keep ]
	run "$DUMP" -f -m "$T/meta" "$IMG"
	assert_success
	echo keep >"$T/restored"
	run "$DUMP" --restore "$T/meta" "$T/restored"
	[ "$status" -eq 8 ]
	[ "$(cat "$T/restored")" = keep ]
	run "$DUMP" --restore "$T/meta" -f "$T/restored"
	assert_success
	"$DUMP" -h "$T/restored" >/dev/null
}

@test "-m never writes over the image it reads" {
	before=$(sha "$IMG")
	run "$DUMP" -f -m "$IMG" "$IMG"
	[ "$status" -eq 8 ]
	assert_output --partial "is the input file itself"
	[ "$(sha "$IMG")" = "$before" ]
}

@test "an output that is not a regular file, or is the input, is refused with exit 8, -f or not" {
	run "$DUMP" -m /dev/null -f "$IMG"
	assert_failure 8
	assert_output "sufs-dump: /dev/null: exists and is not a regular file"
	run "$DUMP" -m /dev/null "$IMG"
	assert_failure 8
	assert_output "sufs-dump: /dev/null: exists and is not a regular file"
	# the input itself: no suggestion of -f, which would not help
	run "$DUMP" -m "$IMG" "$IMG"
	assert_failure 8
	assert_output "sufs-dump: $IMG: is the input file itself"
	"$DUMP" -m "$T/meta" "$IMG"
	before=$(sha "$T/meta")
	run "$DUMP" --restore "$T/meta" -f "$T/meta"
	assert_failure 8
	assert_output "sufs-dump: $T/meta: is the input file itself"
	ln "$T/meta" "$T/link"
	run "$DUMP" --restore "$T/meta" "$T/link"
	assert_failure 8
	assert_output "sufs-dump: $T/link: is the input file itself"
	[ "$(sha "$T/meta")" = "$before" ]
}

@test "an output below a file or in a missing directory is refused with exit 8, and nothing is made" {
	"$DUMP" -m "$T/meta" "$IMG"
	touch "$T/plain"
	run "$DUMP" -m "$T/plain/out" "$IMG"
	assert_failure 8
	assert_output "sufs-dump: $T/plain/out: Not a directory"
	run "$DUMP" --restore "$T/meta" "$T/plain/out"
	assert_failure 8
	assert_output "sufs-dump: $T/plain/out: Not a directory"
	run "$DUMP" -m "$T/nodir/out" "$IMG"
	assert_failure 8
	assert_output "sufs-dump: $T/nodir/out: making a temporary file beside it: No such file or directory"
	run "$DUMP" --restore "$T/meta" "$T/nodir/out"
	assert_failure 8
	assert_output "sufs-dump: $T/nodir/out: making a temporary file beside it: No such file or directory"
	assert_equal "$(ls -A "$T")" "$(printf 'img\nmeta\nplain\nsrc')"
}

@test "a missing image is named in the message and exits 2" {
	run "$DUMP" "$T/nothing"
	[ "$status" -eq 2 ]
	assert_output "sufs-dump: $T/nothing: No such file or directory"
}

@test "a zero-length file is not a sufs file system" {
	: >"$T/empty"
	run "$DUMP" "$T/empty"
	[ "$status" -eq 2 ]
	assert_output "sufs-dump: $T/empty: not a sufs file system (too small to hold a superblock)"
}

@test "a file of random bytes is not a sufs file system" {
	head -c 1M /dev/urandom >"$T/random"
	run "$DUMP" -h "$T/random"
	[ "$status" -eq 2 ]
	assert_output --partial "$T/random: not a sufs file system"
	run "$DUMP" -m "$T/meta" "$T/random"
	[ "$status" -eq 2 ]
	[ ! -e "$T/meta" ]
}

@test "a truncated image is reported as truncated" {
	head -c 1M "$IMG" >"$T/short"
	run "$DUMP" "$T/short"
	[ "$status" -eq 2 ]
	assert_output --partial "$T/short: image is shorter than its superblock says"
}

@test "--restore refuses a truncated metadata image and leaves no output" {
	"$DUMP" -m "$T/meta" "$IMG"
	size=$(stat -c %s "$T/meta")
	for keep in 10 64 100 $((size - 1)); do
		head -c "$keep" "$T/meta" >"$T/cut"
		run "$DUMP" --restore "$T/cut" "$T/restored"
		[ "$status" -eq 8 ]
		assert_output --regexp "$T/cut: (truncated metadata image|not a sufs metadata image \(too short\))"
		[ ! -e "$T/restored" ]
	done
}

@test "--restore refuses a file with the wrong magic" {
	"$DUMP" -m "$T/meta" "$IMG"
	{ printf 'NOTAMETA'; tail -c +9 "$T/meta"; } >"$T/wrong"
	run "$DUMP" --restore "$T/wrong" "$T/restored"
	[ "$status" -eq 8 ]
	assert_output "sufs-dump: $T/wrong: not a sufs metadata image (bad magic)"
	run "$DUMP" --restore "$IMG" "$T/restored"
	[ "$status" -eq 8 ]
	assert_output --partial "not a sufs metadata image (bad magic)"
	[ ! -e "$T/restored" ]
}

@test "a failed -m or --restore leaves an existing output as it was, and no temporary file" {
	mkdir "$T/out"
	"$DUMP" -m "$T/meta" "$IMG"
	echo keep >"$T/out/kept"
	# a changed byte in the stream: found only halfway through
	cp "$T/meta" "$T/bad"
	poke "$T/bad" $(($(stat -c %s "$T/meta") / 2))
	run "$DUMP" --restore "$T/bad" -f "$T/out/kept"
	assert_failure 8
	assert_output --partial "corrupt metadata image"
	[ "$(cat "$T/out/kept")" = keep ]
	# a file size limit: the output cannot be written; no signal kills it
	run bash -c 'ulimit -f 0; exec "$0" "$@"' "$DUMP" -f -m "$T/out/kept" "$IMG"
	assert_failure 8
	assert_output --partial "File too large"
	[ "$(cat "$T/out/kept")" = keep ]
	run bash -c 'ulimit -f 1024; exec "$0" "$@"' "$DUMP" --restore "$T/meta" "$T/out/new"
	assert_failure 8
	assert_output "sufs-dump: $T/out/new: File too large"
	assert_equal "$(ls -A "$T/out")" "kept"
	# a symbolic link is not written through, with -f or not
	ln -s kept "$T/out/link"
	run "$DUMP" -f -m "$T/out/link" "$IMG"
	assert_failure 8
	assert_output "sufs-dump: $T/out/link: exists and is not a regular file"
	ln -s nowhere "$T/out/dangling"
	run "$DUMP" --restore "$T/meta" "$T/out/dangling"
	assert_failure 8
	assert_output "sufs-dump: $T/out/dangling: exists and is not a regular file"
	[ "$(cat "$T/out/kept")" = keep ]
	[ ! -e "$T/out/nowhere" ]
	assert_equal "$(ls -A "$T/out" | sort | tr '\n' ' ')" "dangling kept link "
}

@test "-m and --restore give their output the input's permissions; an empty output name is refused" {
	chmod 600 "$IMG"
	"$DUMP" -m "$T/meta" "$IMG"
	[ "$(stat -c %a "$T/meta")" = 600 ]
	"$DUMP" --restore "$T/meta" "$T/restored"
	[ "$(stat -c %a "$T/restored")" = 600 ]
	run "$DUMP" -m "" "$IMG"
	assert_failure 8
	assert_output "sufs-dump: '': an empty name"
}

@test "--restore refuses a metadata image whose header or data was changed" {
	"$DUMP" -m "$T/meta" "$IMG"
	cp "$T/meta" "$T/hdr"
	poke "$T/hdr" 20
	run "$DUMP" --restore "$T/hdr" "$T/restored"
	[ "$status" -eq 8 ]
	assert_output --partial "header checksum does not match"
	size=$(stat -c %s "$T/meta")
	for off in 70 $((size / 2)) $((size - 2)); do
		cp "$T/meta" "$T/data"
		poke "$T/data" "$off"
		run "$DUMP" --restore "$T/data" "$T/restored"
		[ "$status" -eq 8 ]
		assert_output --partial "corrupt metadata image"
		[ ! -e "$T/restored" ]
	done
	cat "$T/meta" "$T/meta" >"$T/long"
	run "$DUMP" --restore "$T/long" "$T/restored"
	[ "$status" -eq 8 ]
	assert_output --partial "longer than its header says"
}

# craft_meta FILE CASE: a metadata image that is well formed (its header's
# CRC right, its zlib stream whole) but says something impossible
craft_meta() {
	python3 - "$1" "$2" <<'EOF2'
import struct, sys, zlib
out, case = sys.argv[1], sys.argv[2]
bs, nblocks = 1024, 1024
h = dict(version=1, bs=bs, image=nblocks * bs, blocks=nblocks, stored=1, records=1)
def rec(start, count):
    return struct.pack("<QI", start, count) + bytes([7]) * (bs * min(count, 4))
end = struct.pack("<QI", 2**64 - 1, 0)
payload, extra, cut = rec(1, 1) + end, b"", 0
if case == "version": h["version"] = 2
elif case == "blocksize": h["bs"] = 3000
elif case == "blockcount": h["blocks"] = nblocks + 1
elif case == "counts": h["stored"] = nblocks + 1
elif case == "beyond": payload = rec(nblocks, 1) + end
elif case == "order": payload, h["stored"], h["records"] = rec(5, 1) + rec(3, 1) + end, 2, 2
elif case == "huge": payload = struct.pack("<QI", 10, 2**32 - 1) + end
elif case == "more": payload = rec(1, 1) + rec(2, 1) + end
elif case == "fewer": h["stored"], h["records"] = 2, 2
elif case == "records": payload, h["stored"], h["records"] = rec(1, 2) + end, 2, 2
elif case == "after": payload = rec(1, 1) + end + b"x"
elif case == "noend": payload = rec(1, 1)
elif case == "trailing": extra = b"garbage"
elif case == "cut": cut = 6
elif case == "reserved": h["reserved"] = 1
stream = zlib.compress(payload)
stream = stream[:len(stream) - cut] + extra
raw = b"SUFSMETA" + struct.pack("<IIQQQQQI", h["version"], h["bs"], h["image"], h["blocks"],
                                h["stored"], h["records"], len(stream), h.get("reserved", 0))
raw += struct.pack("<I", zlib.crc32(raw) & 0xffffffff)
open(out, "wb").write(raw + stream)
EOF2
}

@test "--restore refuses a well-formed metadata image that says the impossible, and writes nothing" {
	# the control: the crafter makes a file --restore takes
	craft_meta "$T/good" good
	run "$DUMP" --restore "$T/good" "$T/restored"
	assert_success
	[ "$(stat -c %s "$T/restored")" -eq $((1024 * 1024)) ]
	cmp -n 1024 -i 1024:0 "$T/restored" <(head -c 1024 /dev/zero | tr '\0' '\7')
	rm "$T/restored"
	while read -r case message; do
		craft_meta "$T/bad" "$case"
		run "$DUMP" --restore "$T/bad" "$T/restored"
		[ "$status" -eq 8 ] || { echo "$case: status $status: $output"; false; }
		[ "$output" = "sufs-dump: $T/bad: $message" ] || { echo "$case: $output"; false; }
		[ ! -e "$T/restored" ]
	done <<-'EOF'
	version unsupported metadata image version
	reserved corrupt metadata image (reserved header field is not 0)
	blocksize corrupt metadata image (bad block size)
	blockcount corrupt metadata image (bad image size or block count)
	counts corrupt metadata image (bad counts)
	beyond corrupt metadata image (record for 1 blocks at block 1024 is out of order or out of range)
	order corrupt metadata image (record for 1 blocks at block 3 is out of order or out of range)
	huge corrupt metadata image (record for 4294967295 blocks at block 10 is out of order or out of range)
	more corrupt metadata image (more data than the header says)
	fewer corrupt metadata image (1 of 2 blocks found)
	records corrupt metadata image (1 of 2 records found)
	after corrupt metadata image (data after the end record)
	noend corrupt metadata image (the data ends before its end record)
	trailing corrupt metadata image (bytes after the compressed data)
	cut truncated metadata image (the compressed data ends early)
	EOF
}

@test "--restore from a pipe takes a whole metadata image and refuses bytes appended to it" {
	"$DUMP" -m "$T/meta" "$IMG"
	run "$DUMP" --restore /dev/stdin "$T/restored" <"$T/meta"
	assert_success
	"$FSCK" -fn "$T/restored"
	rm "$T/restored"
	# a pipe, so that no length is known before the end
	run bash -c '{ cat "$1"; printf x; } | "$2" --restore /dev/stdin "$3"' _ "$T/meta" "$DUMP" "$T/restored"
	[ "$status" -eq 8 ]
	assert_output "sufs-dump: /dev/stdin: corrupt metadata image (bytes after the compressed data)"
	[ ! -e "$T/restored" ]
	run bash -c 'head -c -1 "$1" | "$2" --restore /dev/stdin "$3"' _ "$T/meta" "$DUMP" "$T/restored"
	[ "$status" -eq 8 ]
	assert_output --partial "truncated metadata image"
	[ ! -e "$T/restored" ]
}

@test "names in messages are printed with their control bytes escaped" {
	local esc=$'\033[1m' nl=$'\n'
	run "$DUMP" -i "/no${esc}such${nl}file" "$IMG"
	assert_failure 3
	assert_output "sufs-dump: $IMG: /no\x1b[1msuch\nfile: No such file or directory"
	run "$DUMP" -i "9${esc}" "$IMG"
	assert_failure 1
	assert_output "sufs-dump: -i 9\x1b[1m: neither an inode number nor a path (a path starts with /: -i /9\x1b[1m)"
	cp "$IMG" "$T/a${esc}b"
	run "$DUMP" -i 0 "$T/a${esc}b"
	assert_failure 3
	assert_output "sufs-dump: $T/a\x1b[1mb: no inode 0 (inodes are numbered 1 to 1024)"
	run "$DUMP" -m "$T/m${nl}eta" "$T/a${esc}b"
	assert_success
	run "$DUMP" -m "$T/m${nl}eta" "$T/a${esc}b"
	assert_failure 8
	assert_output "sufs-dump: $T/m\neta: exists (use -f to replace it)"
	run "$DUMP" --restore "$T/no${esc}meta" "$T/out"
	assert_failure 8
	assert_output "sufs-dump: $T/no\x1b[1mmeta: No such file or directory"
}

@test "-h or -g given twice is taken once; -i, -m and --restore twice are refused" {
	run "$DUMP" -h "$IMG"
	assert_success
	local header=$output
	run "$DUMP" -h --header "$IMG"
	assert_success
	assert_output "$header"
	run "$DUMP" -g -g "$IMG"
	assert_success
	assert_line --index 0 --regexp "^group "
	run "$DUMP" -h -g "$IMG"
	assert_failure 1
	assert_output "sufs-dump: -h and -g exclude each other"
	run "$DUMP" -g -i 2 "$IMG"
	assert_failure 1
	assert_output "sufs-dump: -g and -i exclude each other"
	run "$DUMP" -i 2 -h "$IMG"
	assert_failure 1
	assert_output "sufs-dump: -i and -h exclude each other"
	run "$DUMP" -i 2 -i 2 "$IMG"
	assert_failure 1
	assert_output "sufs-dump: -i is given twice: one inode at a time"
	run "$DUMP" -m "$T/a" -m "$T/b" "$IMG"
	assert_failure 1
	assert_output "sufs-dump: -m is given twice: one output file"
	[ ! -e "$T/a" ]
	[ ! -e "$T/b" ]
	run "$DUMP" --restore "$T/a" --restore "$T/b" "$T/out"
	assert_failure 1
	assert_output "sufs-dump: --restore is given twice: one metadata image at a time"
}

@test "usage errors exit 1" {
	run "$DUMP"
	[ "$status" -eq 1 ]
	run "$DUMP" "$IMG" "$IMG"
	[ "$status" -eq 1 ]
	run "$DUMP" -h -g "$IMG"
	[ "$status" -eq 1 ]
	run "$DUMP" -m "$T/meta" --json "$IMG"
	[ "$status" -eq 1 ]
	run "$DUMP" -m "$T/meta" --restore "$T/meta" "$IMG"
	[ "$status" -eq 1 ]
	run "$DUMP" -f "$IMG"
	[ "$status" -eq 1 ]
	run "$DUMP" --bogus "$IMG"
	[ "$status" -eq 1 ]
	# an inode or a path that is not there is not a usage error: 3
	run "$DUMP" -i 0 "$IMG"
	[ "$status" -eq 3 ]
	assert_output --partial "no inode 0 (inodes are numbered 1 to 1024)"
	run "$DUMP" -i 99999 "$IMG"
	[ "$status" -eq 3 ]
	run "$DUMP" -i /no/such/file "$IMG"
	[ "$status" -eq 3 ]
	assert_output --partial "/no/such/file: No such file or directory"
	# a word that is neither a number nor a path: the path it may mean
	run "$DUMP" -i nope "$IMG"
	[ "$status" -eq 1 ]
	assert_output "sufs-dump: -i nope: neither an inode number nor a path (a path starts with /: -i /nope)"
}

@test "a name longer than a message can show is cut short with ..." {
	local long
	long=$T/$(printf 'n%.0s' $(seq 1100))
	run "$DUMP" "$long"
	assert_failure 2
	assert_output "sufs-dump: ${long:0:1024}...: File name too long"
}

# ---- the manual page ----------------------------------------------------------------

@test "the examples of sufs(5) run in order from an empty directory and print what the page shows" {
	run_examples sufs.5
	run diff -u "$T/expected" "$T/actual"
	assert_success
}

@test "the examples of sufs-dump(8) run in order from an empty directory and print what the page shows" {
	require_root  # the page shows the files of its tree as user 0's
	require_cmd jq
	run_examples sufs-dump.8
	run diff -u "$T/expected" "$T/actual"
	assert_success
}

@test "-s BLOCK shows a backup superblock, as dumpe2fs -o superblock=, and checks that copy" {
	mkimg "$T/b.img" 32M -b 1024
	"$DEBUG" -w -R "ssv checksum 1" "$T/b.img"
	run "$DUMP" -h "$T/b.img"
	assert_failure 4
	for s in 8192 8192:1024; do
		run --separate-stderr "$DUMP" -s "$s" -h "$T/b.img"
		assert_success
		assert_line --regexp '^Superblock of group: +1$'
		assert_line --regexp '^Superblock checksum: +0x[0-9a-f]+ \(ok\)$'
	done
	run --separate-stderr "$DUMP" -s 24576 -i / "$T/b.img"
	assert_success
	assert_line --regexp '^Inode: 2 +Type: directory '
	run --separate-stderr "$DUMP" -s 8193 -h "$T/b.img"
	assert_failure 2
	assert_equal "$stderr" "sufs-dump: $T/b.img: no superblock copy at block 8193, for any block size (-s names a backup by the block it starts)"
	run --separate-stderr "$DUMP" -s 8192 -m "$T/meta" "$T/b.img"
	assert_success
	run --separate-stderr "$DUMP" -s 8192 --restore "$T/meta" "$T/x"
	assert_failure 1
	assert_equal "$stderr" "sufs-dump: --restore takes no -s: it makes IMAGE"
}

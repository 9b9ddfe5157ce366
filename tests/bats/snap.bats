#!/usr/bin/env bats
# sufs-snap: a snapshot keeps the tree as it was while the image changes,
# its export is that tree as a standalone image, deleting it gives back
# what it held; list and info in text and JSON; and every error says what
# is wrong, with the exit status of sufs-snap(8).

bats_require_minimum_version 1.5.0
load helper

setup() {
	export TZ=UTC
	IMG=$T/fs.img
}

# The trees hold a directory without write permission: let bats clean up.
teardown() {
	chmod -R u+w "$T" 2>/dev/null || true
}

# snap ARGS...: run sufs-snap, stdout and stderr apart.
snap() {
	run --separate-stderr "$SNAP" "$@"
}

# make_tree DIR: a tree to snapshot: shared/tools/mktree's when it is
# there, else a smaller one made here.
make_tree() {
	local dir=$1 i
	if [ -n "$MKTREE" ]; then
		"$MKTREE" --files 160 --seed 5 --max-size 200000 "$dir" >/dev/null
		return
	fi
	mkdir -p "$dir/a/b" "$dir/c"
	for i in $(seq 0 39); do
		head -c $((i * 997)) /dev/urandom >"$dir/$(printf 'a/b c' | cut -d' ' -f$((i % 2 + 1)))/f$i"
	done
	ln -s b/f0 "$dir/a/link"
	ln "$dir/c/f1" "$dir/a/hard"
	dd if=/dev/urandom of="$dir/a/sparse" bs=4096 count=2 seek=100 status=none
}

# write_pattern: for each line "FILE OFFSET LENGTH SEED" of standard
# input, write LENGTH bytes of sufs-replay's pattern for SEED at OFFSET of
# FILE: byte o is byte o % 8 of mix64(SEED * 0x9e3779b97f4a7c15 + o / 8).
write_pattern() {
	python3 -c '
import os, sys
M = (1 << 64) - 1
G = 0x9e3779b97f4a7c15
def mix64(z):
    z = (z + G) & M
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)
for line in sys.stdin:
    path, off, length, seed = line.rsplit(None, 3)
    off, length, seed = int(off), int(length), int(seed)
    words = range(off // 8, (off + length + 7) // 8)
    data = b"".join(mix64((seed * G + w) & M).to_bytes(8, "little") for w in words)
    with open(path, "r+b" if os.path.exists(path) else "wb") as f:
        f.seek(off)
        f.write(data[off % 8:off % 8 + length])
'
}

# plan_changes TREE SCRIPT: change TREE on the host (writes, truncations,
# deletes, renames of files and of a directory, new files) and write the
# sufs-replay script that makes the same changes in an image of it.
# Written bytes are sufs-replay's pattern (sufs-replay(8), "write"),
# made here by write_pattern.
plan_changes() {
	local tree=$1 script=$2 i=0 f rel size dir
	local -a files
	mapfile -t files < <(cd "$tree" && find . -type f | LC_ALL=C sort)
	: >"$script"
	: >"$T/writes"
	for f in "${files[@]}"; do
		rel=${f#.}
		size=$(stat -c %s "$tree/$f")
		case $((i % 6)) in
		0)	echo "unlink $rel" >>"$script"
			rm "$tree/$f" ;;
		1)	echo "write $rel $((size / 3)) 3000 $i" >>"$script"
			echo "$tree/$f $((size / 3)) 3000 $i" >>"$T/writes" ;;
		2)	dir=${rel%/*}
			echo "rename $rel $dir/r$i" >>"$script"
			mv "$tree/$f" "$tree$dir/r$i" ;;
		3)	echo "truncate $rel $((size / 2))" >>"$script"
			truncate -s $((size / 2)) "$tree/$f" ;;
		4)	echo "write $rel $size 10000 $i" >>"$script"
			echo "$tree/$f $size 10000 $i" >>"$T/writes" ;;
		esac
		i=$((i + 1))
	done
	printf '%s\n' "mkdir /added" "create /added/new" "write /added/new 0 50000 7" >>"$script"
	mkdir "$tree/added"
	echo "$tree/added/new 0 50000 7" >>"$T/writes"
	write_pattern <"$T/writes"
	# a whole directory moves, last, so that the paths above hold
	dir=$(cd "$tree" && find . -mindepth 1 -maxdepth 1 -type d ! -name added | LC_ALL=C sort | head -1)
	echo "rename ${dir#.} /moved" >>"$script"
	mv "$tree/$dir" "$tree/moved"
	[ "$i" -ge 12 ]
}

# meta_list DIR: one line per entry below DIR but /.snap: type, mode,
# size (not for directories), mtime with nanoseconds, link target, path.
meta_list() {
	(cd "$1" && find . -mindepth 1 -path ./.snap -prune -o \
		\( -type d -printf '%y %m - %T@ %p\n' -o -printf '%y %m %s %T@ %p -> %l\n' \)) |
		LC_ALL=C sort
}

# same_tree TREE IMAGE: rdump IMAGE and compare it with TREE (contents,
# and with `meta` also types, modes, sizes and mtimes).
same_tree() {
	local tree=$1 img=$2 out
	out=$(mktemp -d "$T/rdump.XXXXXX")
	run --separate-stderr "$DEBUG" -R "rdump / $out" "$img"
	[ -z "$stderr" ] || echo "$stderr"
	assert_success
	diff -r --no-dereference --exclude=.snap "$tree" "$out"
	if [ "${3:-}" = meta ]; then
		diff <(meta_list "$tree") <(meta_list "$out")
	fi
}

# fsck_clean IMAGE: a full check finds nothing.
fsck_clean() {
	run "$FSCK" -f -n "$1"
	[ "$status" -eq 0 ] || echo "$output"
	assert_success
}

# usage IMAGE: "used-blocks used-inodes free-blocks free-inodes", as a
# full check counts them and as the superblock's summaries say.
usage_of() {
	local f d
	f=$("$FSCK" -f -n --json "$1" | jq -r '"\(.blocks.used) \(.inodes.used)"')
	d=$("$DUMP" -h --json "$1" | jq -r '"\(.superblock.free_blocks) \(.superblock.free_inodes)"')
	echo "$f $d"
}

@test "an export holds the tree as it was, the image goes on, and delete gives back the blocks" {
	require_cmd python3
	require_cmd jq
	local src=$T/src now=$T/now before after control=$T/control.img
	make_tree "$src"
	"$MKFS" -q -d "$src" "$IMG" 32M
	cp -a "$src" "$now"
	cp --sparse=always "$IMG" "$control"
	plan_changes "$now" "$T/changes"
	# the directory /.snap outlives its snapshots (sufs-snap(8))
	"$REPLAY" "$control" - <<<"mkdir /.snap 0700"

	snap create "$IMG" before
	assert_success
	assert_output ""
	"$REPLAY" "$IMG" "$T/changes"
	"$REPLAY" "$control" "$T/changes"

	snap export "$IMG" before "$T/then.img"
	assert_success
	[ -z "$stderr" ]
	# the export is the tree at snapshot time, mtimes and all; the image
	# is the changed tree; both check clean
	same_tree "$src" "$T/then.img" meta
	same_tree "$now" "$IMG"
	fsck_clean "$T/then.img"
	fsck_clean "$IMG"
	# sparse: not one block more than the view has in use
	[ "$(stat -c %s "$T/then.img")" -eq "$(stat -c %s "$IMG")" ]
	snap info --json "$IMG" before
	assert_success
	[ $(($(stat -c %b "$T/then.img") * 512 / 4096)) -le "$(jq .view.blocks_used <<<"$output")" ]

	snap delete "$IMG" before
	assert_success
	snap list "$IMG"
	assert_output ""
	run "$DEBUG" -R "ls /.snap" "$IMG"
	assert_success
	assert_equal "${lines[*]}" ". .."
	fsck_clean "$IMG"
	same_tree "$now" "$IMG"
	before=$(usage_of "$IMG")
	after=$(usage_of "$control")
	[ "$before" = "$after" ] || { echo "with a snapshot deleted: $before, never one: $after"; false; }
}

@test "each of two snapshots exports its own moment, before and after the older is deleted" {
	require_cmd python3
	local src=$T/src now=$T/now
	make_tree "$src"
	"$MKFS" -q -d "$src" "$IMG" 32M
	cp -a "$src" "$now"
	plan_changes "$now" "$T/changes"
	"$SNAP" create "$IMG" one
	"$REPLAY" "$IMG" "$T/changes"
	"$SNAP" create "$IMG" two
	printf '%s\n' "create /moved/x" "write /moved/x 0 8000 3" "unlink /added/new" \
		"rmdir /added" >"$T/more"
	"$REPLAY" "$IMG" "$T/more"

	"$SNAP" export "$IMG" one "$T/one.img"
	"$SNAP" export "$IMG" two "$T/two.img"
	same_tree "$src" "$T/one.img" meta
	same_tree "$now" "$T/two.img"
	fsck_clean "$T/one.img"
	fsck_clean "$T/two.img"

	# the blocks "one" held that "two" needs too are handed to "two"
	"$SNAP" delete "$IMG" one
	fsck_clean "$IMG"
	"$SNAP" export "$IMG" two "$T/two-again.img"
	same_tree "$now" "$T/two-again.img"
	fsck_clean "$T/two-again.img"
	"$SNAP" delete "$IMG" two
	fsck_clean "$IMG"
}

# same_files A B: the files /f and /g read the same in images A and B
same_files() {
	local f
	for f in /f /g; do
		cmp <("$DEBUG" -R "cat $f" "$1") <("$DEBUG" -R "cat $f" "$2")
	done
}

@test "a snapshot in a slot freed by an older one's deletion is the newest: exports, list and delete hold" {
	mkimg "$IMG" 4M
	printf '%s\n' "create /f" "write /f 0 40K 1" "create /g" "write /g 0 20K 2" \
		"create /h" "write /h 0 40K 7" | "$REPLAY" "$IMG" -
	"$SNAP" create "$IMG" gone
	"$SNAP" create "$IMG" old
	"$SNAP" delete "$IMG" gone
	cp "$IMG" "$T/at-old.img"
	printf '%s\n' "write /f 0 20K 3" "truncate /g 0" "write /g 0 30K 4" | "$REPLAY" "$IMG" -
	# slot 0 again, newer than "old" in slot 1 (a second later than it)
	"$SNAP" create "$IMG" new
	"$DEBUG" -w -f - "$IMG" <<-'EOF'
	set_super_value snap[1].time 1700000000
	set_super_value snap[0].time 1700000001
	EOF
	cp "$IMG" "$T/at-new.img"
	# blocks both need change: the older must keep its own
	printf '%s\n' "write /f 0 40K 5" "unlink /g" "create /g" "write /g 0 40K 6" |
		"$REPLAY" "$IMG" -

	snap list "$IMG"
	assert_success
	[[ ${lines[1]} == "old "* && ${lines[2]} == "new "* ]] || { echo "$output"; false; }
	local before=$output
	# /h's ten blocks, which both need, go to the oldest when freed
	echo "unlink /h" | "$REPLAY" "$IMG" -
	snap list "$IMG"
	assert_success
	diff <(awk 'NR > 1 { print $1, $3 }' <<<"$before") - <<-EOF
	old $(($(awk '$1 == "old" { print $3 }' <<<"$output") - 10))
	new $(awk '$1 == "new" { print $3 }' <<<"$output")
	EOF
	"$SNAP" export "$IMG" old "$T/old.img"
	"$SNAP" export "$IMG" new "$T/new.img"
	same_files "$T/at-old.img" "$T/old.img"
	same_files "$T/at-new.img" "$T/new.img"
	fsck_clean "$IMG"

	# deleting the newer first leaves the older whole, and the other way
	cp "$IMG" "$T/other.img"
	"$SNAP" delete "$IMG" new
	fsck_clean "$IMG"
	"$SNAP" export "$IMG" old "$T/old-again.img"
	same_files "$T/at-old.img" "$T/old-again.img"
	"$SNAP" delete "$T/other.img" old
	fsck_clean "$T/other.img"
	"$SNAP" export "$T/other.img" new "$T/new-again.img"
	same_files "$T/at-new.img" "$T/new-again.img"
}

@test "list shows name, time and blocks held, oldest first; --json says the same" {
	require_cmd jq
	mkimg "$IMG"
	snap list "$IMG"
	assert_success
	assert_output ""
	snap list --json "$IMG"
	assert_success
	assert_output "[]"

	"$SNAP" create "$IMG" first
	printf '%s\n' "create /f" "write /f 0 100K 1" >"$T/s"
	"$REPLAY" "$IMG" "$T/s"
	"$SNAP" create "$IMG" 'second one'
	"$REPLAY" "$IMG" - <<<"unlink /f"

	snap list "$IMG"
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	assert_line -n 0 --regexp '^NAME +TAKEN +BLOCKS +STATE$'
	assert_line -n 1 --regexp '^first +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z +[0-9]+ +ok$'
	assert_line -n 2 --regexp '^second one +[0-9-]{10}T[0-9:]{8}Z +[0-9]+ +ok$'

	snap list --json "$IMG"
	assert_success
	[ "$(jq length <<<"$output")" -eq 2 ]
	[ "$(jq -r '.[0].name' <<<"$output")" = first ]
	[ "$(jq -r '.[1].name' <<<"$output")" = "second one" ]
	# the time is the same moment as text and as a number, and recent
	local t ts
	t=$(jq -r '.[1].time' <<<"$output")
	ts=$(jq -r '.[1].timestamp' <<<"$output")
	[ "$(date -u -d "@$ts" +%Y-%m-%dT%H:%M:%SZ)" = "$t" ]
	[ $(($(date +%s) - ts)) -lt 600 ]
	# "second" holds the 25 data blocks of /f, freed after it was taken
	[ "$(jq '.[1].blocks' <<<"$output")" -ge 25 ]
	# the text shows the same counts
	assert_equal "$("$SNAP" list "$IMG" | awk 'NR > 1 { print $(NF - 1) }' | paste -sd' ')" \
		"$(jq -r '[.[].blocks] | map(tostring) | join(" ")' <<<"$output")"
}

@test "a slot's time that has no date is shown in seconds by list, list --json and info" {
	mkimg "$IMG" 4M
	"$SNAP" create "$IMG" s
	"$DEBUG" -w -R "set_super_value snap[0].time 9223372036854775807" "$IMG"
	snap list "$IMG"
	assert_success
	assert_line --index 1 --regexp '^s +9223372036854775807 +[0-9]+  ok$'
	snap list --json "$IMG"
	assert_success
	assert_output --partial '"time": "9223372036854775807", "timestamp": 9223372036854775807,'
	snap info "$IMG" s
	assert_success
	assert_line "Taken:          9223372036854775807"
	"$DEBUG" -w -R "set_super_value snap[0].time -5" "$IMG"
	snap list "$IMG"
	assert_line --index 1 --regexp '^s +1969-12-31T23:59:55Z +[0-9]+  ok$'
}

@test "info shows the snapshot and the file system as it sees it" {
	require_cmd jq
	mkimg "$IMG"
	printf '%s\n' "mkdir /d" "create /d/f" "write /d/f 0 64K 2" >"$T/s"
	"$REPLAY" "$IMG" "$T/s"
	"$SNAP" create "$IMG" s
	"$REPLAY" "$IMG" - <<<"unlink /d/f"

	snap info --json "$IMG" s
	assert_success
	[ "$(jq -r .name <<<"$output")" = s ]
	[ "$(jq .slot <<<"$output")" -eq 0 ]
	[ "$(jq .inode <<<"$output")" -gt 0 ]
	# the view still has /d/f: its counts are those of the image then
	"$SNAP" export "$IMG" s "$T/then.img"
	run "$FSCK" -f -n --json "$T/then.img"
	local fj=$output
	snap info --json "$IMG" s
	[ "$(jq .view.blocks_used <<<"$output")" -eq "$(jq .blocks.used <<<"$fj")" ]
	[ "$(jq .view.inodes_used <<<"$output")" -eq "$(jq .inodes.used <<<"$fj")" ]
	[ "$(jq .view.block_size <<<"$output")" -eq 4096 ]

	snap info "$IMG" s
	assert_success
	assert_line -n 0 "Name:           s"
	assert_line -n 1 "Slot:           0"
	assert_line --regexp '^Inode: +[0-9]+ \(/\.snap/s\)$'
	assert_line --regexp '^Taken: +[0-9-]{10}T[0-9:]{8}Z$'
	assert_line "State:          ok"
	assert_line --regexp '^  Blocks used: +[0-9]+ of 4096$'
	assert_line --regexp '^  Inodes used: +[0-9]+ of 1024$'
}

@test "create refuses a name that exists" {
	mkimg "$IMG"
	"$SNAP" create "$IMG" s
	local before
	before=$(sha "$IMG")
	snap create "$IMG" s
	assert_failure 3
	assert_equal "$stderr" "sufs-snap: $IMG: a snapshot named \"s\" exists already"
	snap list "$IMG"
	[ "${#lines[@]}" -eq 2 ]
}

@test "create refuses a name that cannot be a file name in /.snap" {
	local name long
	long=$(printf 'n%.0s' $(seq 256))
	mkimg "$IMG"
	local before
	before=$(sha "$IMG")
	for name in "" "a/b" "/" "." ".." "$long"; do
		snap create "$IMG" "$name"
		assert_failure 1
		[[ $stderr == "sufs-snap: bad snapshot name"* ]]
	done
	snap create "$IMG" a/b
	assert_equal "$stderr" "sufs-snap: bad snapshot name \"a/b\": it contains '/'"
	snap info "$IMG" ..
	assert_failure 1
	snap delete "$IMG" ""
	assert_failure 1
	assert_equal "$stderr" "sufs-snap: bad snapshot name \"\": it is empty"
	snap export "$IMG" "$long" "$T/out.img"
	assert_failure 1
	assert_equal "$stderr" "sufs-snap: bad snapshot name: it is longer than 255 bytes"
	[ ! -e "$T/out.img" ]
	# untouched; a 255-byte name is fine
	[ "$(sha "$IMG")" = "$before" ]
	snap create "$IMG" "${long:1}"
	assert_success
}

@test "create says when all 20 slots are taken" {
	local i
	mkimg "$IMG"
	for i in $(seq 1 20); do
		"$SNAP" create "$IMG" "s$i"
	done
	snap create "$IMG" s21
	assert_failure 4
	assert_equal "$stderr" "sufs-snap: $IMG: all 20 snapshot slots are taken: delete a snapshot first"
	"$SNAP" delete "$IMG" s7
	snap create "$IMG" s21
	assert_success
	fsck_clean "$IMG"
}

@test "create says when there is no space left" {
	mkimg "$IMG"
	printf '%s\n' "create /big" "!ENOSPC write /big 0 20M" >"$T/s"
	"$REPLAY" "$IMG" "$T/s"
	snap create "$IMG" s
	assert_failure 4
	assert_equal "$stderr" "sufs-snap: $IMG: no space left for snapshot \"s\""
	snap list "$IMG"
	assert_output ""
	fsck_clean "$IMG"
}

@test "create tells a file left by an interrupted create from a user's file" {
	mkimg "$IMG"
	# what a crash in the middle of create leaves: a snapshot file, no slot
	"$DEBUG" -w -f - "$IMG" <<-EOF
		mkdir /.snap 0700
		create /.snap/half
		create /.snap/mine
		set_inode_field /.snap/half flags 1
	EOF
	snap create "$IMG" half
	assert_failure 3
	assert_equal "$stderr" "sufs-snap: $IMG: /.snap/half is left from a create that did not finish: remove it with sufs-snap delete"
	snap create "$IMG" mine
	assert_failure 3
	assert_equal "$stderr" "sufs-snap: $IMG: /.snap/mine exists and is not a snapshot"
	snap delete "$IMG" mine
	assert_failure 3
	snap delete "$IMG" half
	assert_success
	snap create "$IMG" half
	assert_success
	fsck_clean "$IMG"
}

@test "/.snap keeps its name while it holds a snapshot, so each stays deletable" {
	mkimg "$IMG"
	snap create "$IMG" s1
	assert_success
	# renamed away, /.snap would leave s1 where delete cannot find it
	run "$REPLAY" "$IMG" - <<-EOF
		mkdir /y
		!EPERM rename /.snap /x
		!EPERM rename /.snap /y/z
		create /.snap/user
		rename /.snap/user /u
	EOF
	assert_success
	snap delete "$IMG" s1
	assert_success
	run "$REPLAY" "$IMG" - <<<"rename /.snap /x"
	assert_success
	snap create "$IMG" s2
	assert_success
	snap delete "$IMG" s2
	assert_success
	fsck_clean "$IMG"
}

@test "a snapshot that lost a copy for lack of room is shown broken and can only be deleted" {
	require_cmd jq
	mkimg "$IMG"
	"$REPLAY" "$IMG" - <<<$'create /f\nwrite /f 0 4M 1'
	"$SNAP" create "$IMG" s
	# fill the rest, then overwrite /f: its old blocks have nowhere to go
	"$REPLAY" "$IMG" - <<<$'create /g\n!ENOSPC write /g 0 20M 2\nwrite /f 0 1M 3'
	snap list "$IMG"
	assert_success
	assert_line -n 1 --regexp '^s +[0-9-]{10}T[0-9:]{8}Z +[0-9]+ +broken$'
	snap info --json "$IMG" s
	assert_success
	[ "$(jq .broken <<<"$output")" = true ]
	[ "$(jq .view <<<"$output")" = null ]
	snap info "$IMG" s
	assert_line --regexp '^State: +broken '
	mkdir "$T/out"
	snap export "$IMG" s "$T/out/then.img"
	assert_failure 4
	assert_equal "$stderr" "sufs-snap: $IMG: snapshot \"s\" is broken (a copy could not be made for lack of room): it can only be deleted"
	[ -z "$(ls -A "$T/out")" ]
	snap delete "$IMG" s
	assert_success
	fsck_clean "$IMG"
}

@test "two slots naming one file: writes copy once, delete refuses until fsck repairs" {
	mkimg "$IMG"
	"$REPLAY" "$IMG" - <<<$'create /f\nwrite /f 0 64K 1'
	"$SNAP" create "$IMG" s
	local ino
	ino=$("$DEBUG" -R "stat /.snap/s" "$IMG" | sed -n 's/^Inode: *\([0-9]*\).*/\1/p')
	[ -n "$ino" ]
	"$DEBUG" -w -f - "$IMG" <<<"ssv snap[1].ino $ino"$'\n'"ssv snap[1].time 1"
	# the old data is copied once, into the one file the two slots name
	"$REPLAY" "$IMG" - <<<'write /f 0 64K 2'
	run "$FSCK" -fn "$IMG"
	assert_failure 4
	assert_line --regexp "^Snapshot slots 0 and 1 both name inode $ino\."
	[ "$(grep -c '? no$' <<<"$output")" -eq 1 ] # no block copied twice and leaked
	snap delete "$IMG" s
	assert_failure 4
	assert_equal "$stderr" "sufs-snap: $IMG: deleting snapshot \"s\": corrupt metadata; fsck.sufs -f repairs it"
	"$DEBUG" -R "stat /.snap/s" "$IMG" >/dev/null
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	snap delete "$IMG" s
	assert_success
	fsck_clean "$IMG"
}

@test "a damaged snapshot: info and export say so, fsck takes it out of its slot and removes its file" {
	mkimg "$IMG"
	"$REPLAY" "$IMG" - <<<$'create /f\nwrite /f 0 64K 1'
	"$SNAP" create "$IMG" s
	"$REPLAY" "$IMG" - <<<'write /f 0 64K 2'
	cp "$IMG" "$T/copy.img"
	# the snapshot's copy of the superblock: a byte of its block count
	"$DEBUG" -w -R "zap -f /.snap/s 0 1040 1 255" "$IMG"
	local damaged="the snapshot is damaged: it can only be deleted"
	snap info "$IMG" s
	assert_failure 4
	assert_equal "$stderr" "sufs-snap: $IMG: opening the view of snapshot \"s\": checksum does not match; $damaged"
	snap export "$IMG" s "$T/then.img"
	assert_failure 4
	assert_equal "$stderr" "sufs-snap: $IMG: opening the view of snapshot \"s\": checksum does not match; $damaged"
	[ ! -e "$T/then.img" ]
	run "$FSCK" -fn "$IMG"
	assert_failure 4
	assert_line --regexp "^Snapshot slot 0 \(inode [0-9]+\) does not read as this file system was \(its copy of the superblock: checksum does not match\)\.  Clear\? no$"
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_line --regexp "^Inode [0-9]+ is a snapshot file that no slot names \(one being taken or deleted\)\.  Remove\? yes$"
	fsck_clean "$IMG"
	snap list "$IMG"
	assert_output ""
	snap delete "$IMG" s
	assert_failure 3
	fsck_clean "$IMG"
	run "$DEBUG" -R "ls /.snap" "$IMG"
	refute_line s
	# a damaged copy of the descriptors (block 1) is named as such
	cp "$T/copy.img" "$T/gd.img"
	"$DEBUG" -w -R "zap -f /.snap/s 1 8 1 255" "$T/gd.img"
	run "$FSCK" -fn "$T/gd.img"
	assert_failure 4
	assert_line --regexp "^Snapshot slot 0 \(inode [0-9]+\) does not read as this file system was \(its copy of the group descriptors: checksum does not match\)\.  Clear\? no$"
	# delete needs no check first
	"$DEBUG" -w -R "zap -f /.snap/s 0 1040 1 255" "$T/copy.img"
	snap delete "$T/copy.img" s
	assert_success
	fsck_clean "$T/copy.img"
}

@test "info, delete and export of a snapshot that is not there say so" {
	mkimg "$IMG"
	"$SNAP" create "$IMG" here
	snap info "$IMG" there
	assert_failure 3
	assert_equal "$stderr" "sufs-snap: $IMG: no snapshot named \"there\""
	snap delete "$IMG" there
	assert_failure 3
	assert_equal "$stderr" "sufs-snap: $IMG: no snapshot named \"there\""
	mkdir "$T/out"
	snap export "$IMG" there "$T/out/then.img"
	assert_failure 3
	assert_equal "$stderr" "sufs-snap: $IMG: no snapshot named \"there\""
	[ -z "$(ls -A "$T/out")" ]
}

@test "a missing, truncated or foreign image is an error naming it" {
	snap list "$T/nope.img"
	assert_failure 2
	assert_equal "$stderr" "sufs-snap: $T/nope.img: No such file or directory"
	snap create "$T/nope.img" s
	assert_failure 2
	[ ! -e "$T/nope.img" ]

	head -c 1M /dev/zero >"$T/zero.img"
	snap create "$T/zero.img" s
	assert_failure 2
	assert_equal "$stderr" "sufs-snap: $T/zero.img: not a sufs file system (bad magic number)"
	cmp "$T/zero.img" <(head -c 1M /dev/zero)

	mkimg "$IMG"
	truncate -s 8M "$IMG"
	snap list "$IMG"
	assert_failure 2
	assert_equal "$stderr" "sufs-snap: $IMG: image is shorter than its superblock says (truncated)"
}

@test "export on a terminal shows a bar of the blocks; -q draws none" {
	mkimg "$IMG" 16M
	"$SNAP" create "$IMG" s
	on_tty "$SNAP" export "$IMG" s "$T/a.img"
	assert_success
	assert_line --index -1 --regexp '^Exporting: \[#{40}\] ([0-9]+)/\1$'
	on_tty "$SNAP" export -q "$IMG" s "$T/b.img"
	assert_success
	assert_output ""
}

@test "export will not overwrite without -f, nor write over a non-file or the image" {
	mkimg "$IMG"
	"$SNAP" create "$IMG" s
	echo keep >"$T/out.img"
	snap export "$IMG" s "$T/out.img"
	assert_failure 8
	assert_equal "$stderr" "sufs-snap: $T/out.img: exists (use -f to replace it)"
	[ "$(cat "$T/out.img")" = keep ]
	snap export -f "$IMG" s "$T/out.img"
	assert_success
	fsck_clean "$T/out.img"

	snap export -f "$IMG" s "$IMG"
	assert_failure 8
	assert_equal "$stderr" "sufs-snap: $IMG: is the input file itself"
	mkdir "$T/dir"
	snap export -f "$IMG" s "$T/dir"
	assert_failure 8
	assert_equal "$stderr" "sufs-snap: $T/dir: exists and is not a regular file"
	fsck_clean "$IMG"
}

@test "an export is readable by no more users than the image, and an empty output name is refused" {
	mkimg "$IMG"
	"$SNAP" create "$IMG" s
	chmod 600 "$IMG"
	snap export "$IMG" s "$T/private.img"
	assert_success
	[ "$(stat -c %a "$T/private.img")" = 600 ]
	chmod 644 "$IMG"
	(umask 077 && "$SNAP" export "$IMG" s "$T/masked.img")
	[ "$(stat -c %a "$T/masked.img")" = 600 ]
	snap export "$IMG" s ""
	assert_failure 8
	assert_equal "$stderr" "sufs-snap: '': an empty name"
}

@test "an export that fails leaves no image behind and the old one as it was" {
	mkimg "$IMG"
	"$SNAP" create "$IMG" s
	mkdir "$T/out"
	echo keep >"$T/out/then.img"
	# a file size limit of 1 MiB: the 16 MiB output cannot be made
	run --separate-stderr bash -c 'ulimit -f 1024; exec "$0" "$@"' \
		"$SNAP" export -f "$IMG" s "$T/out/then.img"
	assert_failure 8
	[[ $stderr == "sufs-snap: $T/out/then.img: exporting snapshot \"s\" of $IMG: File too large"* ]]
	[ "$(cat "$T/out/then.img")" = keep ]
	run --separate-stderr bash -c 'ulimit -f 1024; exec "$0" "$@"' \
		"$SNAP" export "$IMG" s "$T/out/new.img"
	assert_failure 8
	# no new image, and no temporary file left either
	assert_equal "$(ls -A "$T/out")" "then.img"
}

# export_interrupted SIGNAL: export $IMG's snapshot s into $T/out/x.img
# and send SIGNAL once its temporary file is there (the handlers are set by
# then), while it copies 200 MiB.  An export that ended first is tried
# again, up to three times; $rc is the status, $err what it printed.
export_interrupted() {
	local sig=$1 pid try k
	for try in 1 2 3; do
		rm -rf "$T/out"
		mkdir "$T/out"
		"$SNAP" export "$IMG" s "$T/out/x.img" 2>"$T/err" &
		pid=$!
		for k in $(seq 1000); do
			compgen -G "$T/out/.sufs-snap.*" >/dev/null && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.005
		done
		kill -"$sig" "$pid" 2>/dev/null || true
		rc=0
		wait "$pid" || rc=$?
		err=$(cat "$T/err")
		[ "$rc" -eq 0 ] || return 0
	done
}

@test "an interrupted export (SIGINT, SIGTERM) writes nothing and leaves no temporary file" {
	mkimg "$IMG" 512M
	printf 'create /big\nwrite /big 0 200M 7\n' | "$REPLAY" "$IMG" -
	"$SNAP" create "$IMG" s
	for sig in INT TERM; do
		export_interrupted $sig
		[ "$rc" -eq 4 ]
		assert_equal "$err" "sufs-snap: $T/out/x.img: interrupted; nothing was written"
		assert_equal "$(ls -A "$T/out")" ""
	done
	# the image and the snapshot are as they were: an export then works
	snap export "$IMG" s "$T/out/x.img"
	assert_success
	fsck_clean "$T/out/x.img"
	fsck_clean "$IMG"
}

@test "usage errors: no command, unknown command, wrong arguments, options out of place" {
	mkimg "$IMG"
	snap
	assert_failure 1
	[[ $stderr == "sufs-snap: no command given"* ]]
	snap snapshot "$IMG"
	assert_failure 1
	[[ $stderr == "sufs-snap: unknown command: snapshot"* ]]
	snap create "$IMG"
	assert_failure 1
	assert_equal "$stderr" "sufs-snap: create: expects IMAGE NAME"
	snap list "$IMG" extra
	assert_failure 1
	snap export "$IMG" s
	assert_failure 1
	assert_equal "$stderr" "sufs-snap: export: expects IMAGE NAME OUT"
	snap create --json "$IMG" s
	assert_failure 1
	assert_equal "$stderr" "sufs-snap: --json: only for list and info"
	snap delete -f "$IMG" s
	assert_failure 1
	assert_equal "$stderr" "sufs-snap: -f: only for export"
	for cmd in "list $IMG" "info $IMG s" "create $IMG s" "delete $IMG s"; do
		# shellcheck disable=SC2086  # the command's words
		snap -q $cmd
		assert_failure 1
		assert_equal "$stderr" "sufs-snap: -q: only for export"
		# shellcheck disable=SC2086
		snap --quiet $cmd
		assert_failure 1
	done
	snap list --bogus "$IMG"
	assert_failure 1
	# nothing was made
	snap list "$IMG"
	assert_output ""
	# a name may start with '-' after --
	snap create "$IMG" -- -dash
	assert_success
	snap list --json "$IMG"
	[[ $output == *'"name": "-dash"'* ]]
}

@test "messages show control characters in commands, images and outputs escaped" {
	local esc
	esc=$(printf '\033')
	mkimg "$T/i${esc}mg"
	snap create "$T/i${esc}mg" s
	assert_success
	snap "sn${esc}ap" "$IMG"
	assert_failure 1
	[[ $stderr == 'sufs-snap: unknown command: sn\x1bap'$'\n'* ]]
	snap list "$T/no${esc}img"
	assert_failure 2
	assert_equal "$stderr" "sufs-snap: $T/no\\x1bimg: No such file or directory"
	snap info "$T/i${esc}mg" nosuch
	assert_failure 3
	assert_equal "$stderr" "sufs-snap: $T/i\\x1bmg: no snapshot named \"nosuch\""
	touch "$T/o${esc}ut"
	snap export "$T/i${esc}mg" s "$T/o${esc}ut"
	assert_failure 8
	assert_equal "$stderr" "sufs-snap: $T/o\\x1but: exists (use -f to replace it)"
	snap export "$T/i${esc}mg" s "$T/no${esc}dir/out"
	assert_failure 8
	assert_equal "$stderr" "sufs-snap: $T/no\\x1bdir/out: exporting snapshot \"s\" of $T/i\\x1bmg: No such file or directory (making a temporary file beside the output)"
}

@test "the EXAMPLES of sufs-snap(8) run in order in an empty directory and print what they show" {
	require_cmd jq
	run_examples sufs-snap.8
	# what the page says varies: the times, and the space the host stores
	# (du of then.img); the file's size, 64M, does not
	local vary='s/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/(time)/
		s/^(before-cleanup) [0-9]+$/\1 (seconds)/
		s/^[0-9.]+K\tthen\.img$/(stored)\tthen.img/'
	diff -u <(sed -E "$vary" "$T/expected") <(sed -E "$vary" "$T/actual")
}

@test "--help and --version" {
	snap --help
	assert_success
	assert_line -n 0 "Usage: sufs-snap create IMAGE NAME"
	[[ $output == *"export [-f] [-q] IMAGE NAME OUT"* ]]
	snap --version
	assert_success
	assert_output --regexp '^sufs-snap \(sufs\) [0-9]+\.[0-9]+'
	snap -V
	assert_success
	assert_output --regexp '^sufs-snap \(sufs\) [0-9]+\.[0-9]+'
}

#!/usr/bin/env bats
# sufs-tune: the label, the UUID, the default write mode and the features
# of a file system, in the primary superblock and in every backup.
# (Its refusal of an image another program writes is in lock.bats.)

load helper

bats_require_minimum_version 1.5.0

setup() {
	IMG=$T/img
	# 1 KiB blocks: backups at blocks 8192 and 24576
	mkimg "$IMG" 32M -b 1024
}

# copies FIELD: the value of a sufs-dump -h FIELD line in the primary and
# in each backup, one a line
copies() {
	local s
	for s in "" 8192 24576; do
		"$DUMP" ${s:+-s "$s"} -h "$IMG" | sed -n "s/^$1: *//p"
	done
}

@test "-L sets the label of every superblock copy, and -L '' removes it" {
	run "$TUNE" -L "my data" "$IMG"
	assert_success
	assert_output ""
	run copies "Filesystem volume name"
	assert_output "$(printf 'my data\nmy data\nmy data')"
	run "$FSCK" -fn "$IMG"
	assert_success
	"$TUNE" -L "" "$IMG"
	run copies "Filesystem volume name"
	assert_output "$(printf '<none>\n<none>\n<none>')"
	run "$TUNE" -L "$(printf 'x%.0s' $(seq 64))" "$IMG"
	assert_failure 1
	assert_line --index 0 "sufs-tune: label '$(printf 'x%.0s' $(seq 64))' is too long: 64 bytes, at most 63"
}

@test "-U takes a UUID, random, time or clear, in every copy" {
	"$TUNE" -U 0A1B2C3D-4E5F-4A6B-8C7D-8E9FA0B1C2D3 "$IMG"
	run copies "Filesystem UUID"
	assert_output "$(printf '0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3\n%.0s' 1 2 3 | head -c -1)"
	"$TUNE" -U random "$IMG"
	run copies "Filesystem UUID"
	assert_line --index 0 --regexp '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
	[ "$(sort -u <<<"$output" | wc -l)" -eq 1 ]
	"$TUNE" -U time "$IMG"
	run copies "Filesystem UUID"
	assert_line --index 0 --regexp '^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
	[ "$(sort -u <<<"$output" | wc -l)" -eq 1 ]
	"$TUNE" -U clear "$IMG"
	run copies "Filesystem UUID"
	assert_output "$(printf '00000000-0000-0000-0000-000000000000\n%.0s' 1 2 3 | head -c -1)"
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$TUNE" -U 0a1b2c3d-4e5f "$IMG"
	assert_failure 1
	assert_line --index 0 "sufs-tune: -U 0a1b2c3d-4e5f: not a UUID (8-4-4-4-12 hex digits, or random, time or clear)"
}

@test "-o sets the default write mode, which sufs-debug -w and sufs-replay without --mode write in" {
	run "$TUNE" -o sync -l "$IMG"
	assert_success
	assert_line "Default write mode:       sync"
	run copies "Default write mode"
	assert_output "$(printf 'sync\nsync\nsync')"
	"$DEBUG" -w -R "mkdir /a" "$IMG"
	run "$DUMP" -h "$IMG"
	assert_line --regexp '^Write mode: +sync$'
	"$TUNE" -o async "$IMG"
	"$REPLAY" --stats "$IMG" - <<<"mkdir /b" >"$T/stats"
	grep -qE '^Write mode: +async$' "$T/stats"
	run "$DUMP" -h "$IMG"
	assert_line --regexp '^Write mode: +async$'
	# --mode still decides when given
	"$REPLAY" --mode softdep "$IMG" - <<<"mkdir /c"
	run "$DUMP" -h "$IMG"
	assert_line --regexp '^Write mode: +softdep$'
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$TUNE" -o fast "$IMG"
	assert_failure 1
	assert_line --index 0 "sufs-tune: -o fast: not a write mode (softdep, sync or async)"
}

@test "-O xattr turns extended attributes on an image made without; any other feature is refused" {
	mkimg "$IMG" 16M -O ^xattr
	"$DEBUG" -w -R "mkdir /d" "$IMG"
	run "$TUNE" -l "$IMG"
	assert_line "Filesystem features:      (none)"
	before=$(sha "$IMG")
	run --separate-stderr "$TUNE" -O bogus "$IMG"
	assert_failure 1
	[[ $stderr == "sufs-tune: -O bogus: no such feature that can be turned on (xattr can)"* ]]
	[ "$(sha "$IMG")" = "$before" ]
	run "$TUNE" -O xattr "$IMG"
	assert_success
	run "$TUNE" -l "$IMG"
	assert_line "Filesystem features:      compat 0x0, incompat 0x0, ro_compat 0x1"
	run "$FSCK" -fn "$IMG"
	assert_success
	"$DEBUG" -w -R "ea_set /d user.a 1" "$IMG"
	run "$DEBUG" -R "ea_get /d user.a" "$IMG"
	assert_output '"1"'
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "sufs-tune refuses a missing image, one that is not sufs, and a damaged primary, changing nothing" {
	run --separate-stderr "$TUNE" -L x "$T/missing"
	assert_failure 2
	assert_equal "$stderr" "sufs-tune: cannot open $T/missing: No such file or directory"
	head -c 1M /dev/zero >"$T/zeros"
	run --separate-stderr "$TUNE" -L x "$T/zeros"
	assert_failure 2
	"$DEBUG" -w -R "ssv checksum 1" "$IMG"
	before=$(sha "$IMG")
	run --separate-stderr "$TUNE" -L x "$IMG"
	assert_failure 2
	assert_equal "$stderr" "sufs-tune: $IMG: checksum does not match
sufs-tune: $IMG: fsck.sufs repairs the superblock first"
	[ "$(sha "$IMG")" = "$before" ]
	run "$TUNE" "$IMG"
	assert_failure 1
	assert_line --index 0 "sufs-tune: nothing to do: give -L, -U, -o, -O or -l"
}

@test "a damaged backup is left as it is with a warning; the others and the primary change" {
	"$DEBUG" -w -R "zap_block 8192 0 16 255" "$IMG"
	run --separate-stderr "$TUNE" -L new "$IMG"
	assert_success
	assert_equal "$stderr" "sufs-tune: warning: $IMG: the backup superblock at block 8192 is damaged, and left as it is"
	run "$DUMP" -s 24576 -h "$IMG"
	assert_line "Filesystem volume name:   new"
	run "$DUMP" -h "$IMG"
	assert_line "Filesystem volume name:   new"
}

@test "SOURCE_DATE_EPOCH is the primary's write time; the backups keep theirs" {
	SOURCE_DATE_EPOCH=1234567890 "$TUNE" -L when "$IMG"
	run "$DEBUG" -R super "$IMG"
	assert_line --regexp '^Last written: +1234567890 '
	run "$DUMP" -s 8192 -h "$IMG"
	refute_line --regexp '^Last write time: +2009-'
}

@test "the examples of sufs-tune(8) run in order from an empty directory and print what the page shows" {
	run_examples sufs-tune.8
	run diff -u "$T/expected" "$T/actual"
	assert_success
}

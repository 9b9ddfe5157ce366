#!/usr/bin/env bats
# One writer at a time: every program that writes an image refuses one that
# another program holds open for writing, and the holder loses nothing.
#
# The holder is `sufs-debug -w` with a change made and not yet written back
# (it writes back only when it quits).  Each test tries one writer on the
# held image; afterwards the holder quits, and its change must be on the
# image, which must check clean.

load helper

bats_require_minimum_version 1.5.0

setup() {
	IMG=$T/held.img
	mkimg "$IMG" 16M
	"$DEBUG" -w -R "mkdir /before" "$IMG"
	"$SNAP" create "$IMG" s1 >/dev/null
}

# hold IMG: start the holder, make its change, wait until it holds the image
hold() {
	mkfifo "$T/hold"
	"$DEBUG" -w "$1" <"$T/hold" >"$T/held" 2>&1 &
	holder=$!
	exec 5>"$T/hold"
	echo "mkdir /pending" >&5
	echo pwd >&5
	for _ in $(seq 600); do
		grep -qx / "$T/held" || ! kill -0 "$holder" 2>/dev/null && break
		sleep 0.05
	done
	grep -qx / "$T/held" || fail "the holder did not start: $(cat "$T/held")"
	held_sha=$(sha "$1")
}

# release IMG: the holder quits; its change must be there, the image clean
release() {
	exec 5>&-
	wait "$holder" || fail "the holder failed: $(cat "$T/held")"
	run "$DEBUG" -R "stat /pending" "$1"
	assert_success
	run "$FSCK" -fn "$1"
	assert_success
}

# refused: the writer just run failed and left the held image as it was
refused() {
	[ "$(sha "$IMG")" = "$held_sha" ] || fail "the held image changed"
}

@test "sufs-replay refuses a held image" {
	hold "$IMG"
	run --separate-stderr "$REPLAY" "$IMG" - <<<"mkdir /a"
	assert_failure 2
	assert_equal "$stderr" "sufs-replay: cannot open $IMG: another program has it open for writing"
	refused
	release "$IMG"
}

@test "a second sufs-debug -w refuses a held image, its edits made after the close too" {
	hold "$IMG"
	run --separate-stderr "$DEBUG" -w -R "set_super_value label x" "$IMG"
	assert_failure 2
	assert_equal "$stderr" "sufs-debug: cannot open $IMG: another program has it open for writing"
	refused
	release "$IMG"
}

@test "fsck.sufs refuses a held image to repair (-fy, -p, -b), and only reads it with -n" {
	hold "$IMG"
	for opt in -fy -p -b; do
		run --separate-stderr "$FSCK" "$opt" "$IMG"
		assert_failure 8
		[[ $stderr == *"another program has it open for writing"* ]] || fail "$stderr"
		refused
	done
	run "$FSCK" -fn "$IMG"
	assert_success
	release "$IMG"
}

@test "mkfs.sufs -f refuses a held image" {
	hold "$IMG"
	run --separate-stderr "$MKFS" -q -f "$IMG" 16M
	assert_failure 2
	[[ $stderr == *"another program has it open for writing"* ]] || fail "$stderr"
	refused
	release "$IMG"
}

@test "sufs-snap create and delete refuse a held image" {
	hold "$IMG"
	run --separate-stderr "$SNAP" create "$IMG" s2
	assert_failure 2
	assert_equal "$stderr" "sufs-snap: $IMG: another program has it open for writing"
	refused
	run --separate-stderr "$SNAP" delete "$IMG" s1
	assert_failure 2
	assert_equal "$stderr" "sufs-snap: $IMG: another program has it open for writing"
	refused
	release "$IMG"
}

@test "sufs-snap export -f does not replace a held image with the export" {
	cp "$IMG" "$T/other.img"
	hold "$IMG"
	run --separate-stderr "$SNAP" export -f -q "$T/other.img" s1 "$IMG"
	assert_failure 8
	assert_equal "$stderr" "sufs-snap: $IMG: another program has it open for writing; it is not replaced"
	refused
	[ -z "$(find "$T" -name '.sufs-snap.*')" ]
	release "$IMG"
	# and the export is made once the image is free
	run "$SNAP" export -f -q "$T/other.img" s1 "$IMG"
	assert_success
}

@test "sufs-dump --restore -f does not replace a held image" {
	"$DUMP" -m "$T/meta" "$IMG"
	hold "$IMG"
	run --separate-stderr "$DUMP" --restore "$T/meta" -f "$IMG"
	assert_failure 8
	assert_equal "$stderr" "sufs-dump: $IMG: another program has it open for writing; it is not replaced"
	refused
	release "$IMG"
}

@test "sufs-dump -m -f does not replace a held image with a metadata file" {
	cp "$IMG" "$T/other.img"
	hold "$IMG"
	run --separate-stderr "$DUMP" -m "$IMG" -f "$T/other.img"
	assert_failure 8
	assert_equal "$stderr" "sufs-dump: $IMG: another program has it open for writing; it is not replaced"
	refused
	release "$IMG"
}

@test "sufs-tune refuses a held image, and changes it once it is free" {
	hold "$IMG"
	run --separate-stderr "$TUNE" -L new -U random -o sync "$IMG"
	assert_failure 2
	assert_equal "$stderr" "sufs-tune: cannot open $IMG: another program has it open for writing"
	refused
	# listing only reads
	run "$TUNE" -l "$IMG"
	assert_success
	release "$IMG"
	run "$TUNE" -L new "$IMG"
	assert_success
	run "$TUNE" -l "$IMG"
	assert_line "Filesystem volume name:   new"
}

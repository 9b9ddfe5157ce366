#!/usr/bin/env bats
# One exit-status scheme for every program but fsck.sufs (common/util.h:
# 0 done, 1 usage, 2 the image cannot be used, 3 not there, 4 failed,
# 8 another file, 16 I/O, 32 and 64 sufs-replay's crashes), said in the
# same words in each man page; fsck.sufs keeps fsck(8)'s (16 usage, 8 an
# image it cannot open).  Every program answers --help and --version, and
# says what is wrong on standard error, after its name.

load helper

bats_require_minimum_version 1.5.0

# The programs of the scheme: NAME PATH (an image is their last argument,
# but sufs-snap's, sufs-replay's and sufs-fuse's, which need a word more);
# sufs-fuse where configure found libfuse3.
programs() {
	cat <<-EOF
	mkfs.sufs $MKFS
	sufs-dump $DUMP
	sufs-debug $DEBUG
	sufs-replay $REPLAY
	sufs-snap $SNAP
	sufs-tune $TUNE
	EOF
	[ ! -x "$FUSE" ] || echo "sufs-fuse $FUSE"
}

# on_image NAME PATH IMAGE: run the program on IMAGE as its simplest use
on_image() {
	case $1 in
	mkfs.sufs)   run --separate-stderr "$2" -q "$3" ;;
	sufs-dump)   run --separate-stderr "$2" -h "$3" ;;
	sufs-debug)  run --separate-stderr "$2" -R ls "$3" ;;
	sufs-replay) run --separate-stderr "$2" "$3" - </dev/null ;;
	sufs-snap)   run --separate-stderr "$2" list "$3" ;;
	sufs-tune)   run --separate-stderr "$2" -l "$3" ;;
	sufs-fuse)   mkdir -p "$T/mnt" && run --separate-stderr "$2" -f "$3" "$T/mnt" ;;
	esac
}

@test "every program answers --help with a Usage: line and its man page, and --version" {
	local name path
	while read -r name path; do
		run --separate-stderr "$path" --help
		assert_success
		assert_equal "$stderr" ""
		[[ ${lines[0]} == "Usage: $name "* ]] || fail "$name --help: ${lines[0]}"
		assert_output --partial "See $name(8)."
		run "$path" --version
		assert_success
		assert_output --regexp "^$name \(sufs\) [0-9]+\.[0-9]+\.[0-9]+\$"
	done < <(programs; echo "fsck.sufs $FSCK")
}

@test "a usage error is 1 in every program, said on stderr after the program's name; fsck.sufs's is 16" {
	local name path
	while read -r name path; do
		run --separate-stderr "$path" --no-such-option "$T/img"
		assert_failure 1
		assert_equal "$output" ""
		[[ $stderr == "$name: "* ]] || fail "$name: $stderr"
		run --separate-stderr "$path"
		assert_failure 1
		[[ $stderr == "$name: "* ]] || fail "$name: $stderr"
	done < <(programs)
	run --separate-stderr "$FSCK" --no-such-option "$T/img"
	assert_failure 16
	[[ $stderr == "fsck.sufs: "* ]]
}

@test "an image that cannot be opened is 2 in every program; fsck.sufs's is 8" {
	local name path
	# missing, and not sufs (zeros); mkfs.sufs is refused a directory
	head -c 1M /dev/zero >"$T/zeros"
	while read -r name path; do
		[ "$name" = mkfs.sufs ] && continue
		for img in "$T/missing" "$T/zeros"; do
			on_image "$name" "$path" "$img"
			[ "$status" -eq 2 ] || fail "$name on $img: $status: $stderr"
			[[ $stderr == "$name: "* ]] || fail "$name: $stderr"
		done
	done < <(programs)
	on_image mkfs.sufs "$MKFS" "$T"
	assert_failure 2
	run "$FSCK" -fn "$T/missing"
	assert_failure 8
	run "$FSCK" -fn "$T/zeros"
	assert_failure 8
}

@test "what a program is asked to find and is not there is 3; a failed piece of work is 4; another file is 8" {
	mkimg "$T/img" 16M
	run "$DUMP" -i /nope "$T/img"
	assert_failure 3
	run "$SNAP" info "$T/img" nope
	assert_failure 3
	run "$DEBUG" -R "cat /nope" "$T/img"
	assert_failure 4
	run "$REPLAY" "$T/img" - <<<"unlink /nope"
	assert_failure 4
	mkdir "$T/src" && ln -s "$(printf 'x%.0s' $(seq 2000))" "$T/src/l"
	run "$MKFS" -q -b 1024 -d "$T/src" "$T/new" 8M
	assert_failure 8
	run "$DEBUG" -f "$T/no-such-file" "$T/img"
	assert_failure 8
	run "$REPLAY" "$T/img" "$T/no-such-script"
	assert_failure 8
	run "$DUMP" -m "$T/img" "$T/img"
	assert_failure 8
}

@test "every man page but fsck.sufs(8) says the same of the codes" {
	local page first=
	for page in mkfs.sufs.8 sufs-dump.8 sufs-debug.8 sufs-replay.8 sufs-snap.8 sufs-tune.8 \
		sufs-fuse.8; do
		# from the section's start to the program's own list ("For ...")
		sed -n '/^\.SH EXIT STATUS/,/^For$/p' "$SUFS_SRCDIR/man/$page" >"$T/$page"
		grep -q '^For$' "$T/$page" || fail "$page: no common part"
		if [ -z "$first" ]; then
			first=$page
		else
			diff -u "$T/$first" "$T/$page"
		fi
	done
	# and the codes the programs use are the ones util.h names
	for code in 0 1 2 3 4 8 16 32 64; do
		grep -qx "\.B $code" "$T/$first" || fail "no code $code"
	done
}

@test "the man pages have one date and one source in their headers" {
	local page
	run bash -c "grep -h '^\.TH ' '$SUFS_SRCDIR'/man/*.[0-9] | awk '{print \$4, \$5, \$6, \$7}' | sort -u"
	assert_success
	assert_output "\"December 2026\" \"sufs $("$MKFS" --version | sed 's/.* //')\""
}

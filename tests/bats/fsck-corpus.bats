#!/usr/bin/env bats
# The corruption corpus of fsck.sufs (tests/fsck, see its README): one test
# per case.  Each builds an image, makes one named damage with sufs-debug's
# editing commands, checks that fsck.sufs -fn leaves the bytes alone, and
# compares two runs of fsck.sufs -fy with expect.1 and expect.2 (the second
# clean, exit 0).

load helper

# corpus CASE: run one case; its differences are the test's output
corpus() {
	run "$SUFS_SRCDIR/tests/fsck/run" "$1"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "every case of tests/fsck is a test of this file" {
	local d missing=0
	for d in "$SUFS_SRCDIR"/tests/fsck/f_*/; do
		d=$(basename "$d")
		grep -q "^	corpus $d\$" "$BATS_TEST_FILENAME" || { echo "not here: $d"; missing=1; }
	done
	[ "$missing" -eq 0 ]
}

@test "f_bad_block: a block pointer past the end of the file system" {
	corpus f_bad_block
}

@test "f_bad_dot: a directory's '.' names another directory" {
	corpus f_bad_dot
}

@test "f_bad_dotdot: a directory's '..' names the wrong directory" {
	corpus f_bad_dotdot
}

@test "f_bad_ind_pointers: the first two pointers of an indirect block are 0xffff..." {
	corpus f_bad_ind_pointers
}

@test "f_bad_mode: an inode has a file type that does not exist" {
	corpus f_bad_mode
}

@test "f_badroot: the root inode is a regular file" {
	corpus f_badroot
}

@test "f_bitmap_padding: bits past the end of group 0's inode bitmap are cleared" {
	corpus f_bitmap_padding
}

@test "f_bitmap_group_end: free blocks marked in use up to the last of a group" {
	corpus f_bitmap_group_end
}

@test "f_block_in_metadata: block pointers into an inode table and a bitmap" {
	corpus f_block_in_metadata
}

@test "f_block_past_size: a file maps blocks past its size" {
	corpus f_block_past_size
}

@test "f_past_size_free: a file maps a block past its size that is marked free: no leak" {
	corpus f_past_size_free
}

@test "f_past_size_claimed: a file maps a block past its size that another file owns: no leak" {
	corpus f_past_size_claimed
}

@test "f_past_size_ind_free: an indirect block past a file's size maps a block marked free: no leak" {
	corpus f_past_size_ind_free
}

@test "f_blocks_count: an inode's block count is wrong" {
	corpus f_blocks_count
}

@test "f_blocks_leaked: blocks marked in use that nothing uses" {
	corpus f_blocks_leaked
}

@test "f_blocks_unmarked: a block in use marked free" {
	corpus f_blocks_unmarked
}

@test "f_dir_block_zeroed: a directory's only block is zeroed" {
	corpus f_dir_block_zeroed
}

@test "f_dir_csum: a directory block's checksum does not match" {
	corpus f_dir_csum
}

@test "f_dir_hole: a directory loses the pointer to its second block" {
	corpus f_dir_hole
}

@test "f_dir_links_high: a directory's link count too high" {
	corpus f_dir_links_high
}

@test "f_dir_loop: /a/b/c names /a, and /a loses its name: a loop nothing reaches" {
	corpus f_dir_loop
}

@test "f_dir_namelen: an entry's name runs past its rec_len" {
	corpus f_dir_namelen
}

@test "f_dir_no_blocks: a directory of size 0" {
	corpus f_dir_no_blocks
}

@test "f_dir_reclen: an entry's rec_len is not a multiple of 8" {
	corpus f_dir_reclen
}

@test "f_dir_size: a directory whose size is not a whole number of blocks" {
	corpus f_dir_size
}

@test "f_file_size_max: a file whose size is past the largest file" {
	corpus f_file_size_max
}

@test "f_size_max_ind_all_bad: that size cut back below an indirect block of bad pointers frees it in one run" {
	corpus f_size_max_ind_all_bad
}

@test "f_entry_dup_name: two entries of one name for two inodes, in different blocks" {
	corpus f_entry_dup_name
}

@test "f_entry_dup_name_full: two entries of one name for two inodes, with no room for a longer name" {
	corpus f_entry_dup_name_full
}

@test "f_entry_dup: a second entry of one name for the same inode" {
	corpus f_entry_dup
}

@test "f_dot_ftype: '.' and '..' with the file type of a file" {
	corpus f_dot_ftype
}

@test "f_snap_slot_file: a snapshot slot names an ordinary file" {
	corpus f_snap_slot_file
}

@test "f_snap_not_in_snapdir: a snapshot's file is not named in /.snap" {
	corpus f_snap_not_in_snapdir
}

@test "f_snap_unreadable: a snapshot's copy of the superblock is damaged" {
	corpus f_snap_unreadable
}

@test "f_snap_size: a snapshot's file is larger than the file system" {
	corpus f_snap_size
}

@test "f_dir_too_big: a directory larger than the file system" {
	corpus f_dir_too_big
}

@test "f_dir_unref: a directory with files loses its name: it goes to a new /lost+found" {
	corpus f_dir_unref
}

@test "f_dir_unref_empty: an empty directory loses its name" {
	corpus f_dir_unref_empty
}

@test "f_dup_block: a file's block is also another file's first block" {
	corpus f_dup_block
}

@test "f_dup_clear: an empty file claims another file's block on a full file system" {
	corpus f_dup_clear
}

@test "f_dup_ind: two files share an indirect block, and all it maps" {
	corpus f_dup_ind
}

@test "f_entry_bad_ino: entries name inode numbers out of range" {
	corpus f_entry_bad_ino
}

@test "f_entry_bad_name: an entry's name holds a slash" {
	corpus f_entry_bad_name
}

@test "f_entry_dir_link: a second name for a directory, and its '..' names neither directory" {
	corpus f_entry_dir_link
}

@test "f_dir_stale_name: a directory has a second name where its '..' does not point" {
	corpus f_dir_stale_name
}

@test "f_entry_dot: an entry is a second '..'" {
	corpus f_entry_dot
}

@test "f_entry_free_ino: an entry names a free inode" {
	corpus f_entry_free_ino
}

@test "f_entry_ftype: an entry's file type does not match its inode" {
	corpus f_entry_ftype
}

@test "f_entry_root: an entry names the root directory" {
	corpus f_entry_root
}

@test "f_group_counts: group 2's free block count is wrong" {
	corpus f_group_counts
}

@test "f_group_desc_csum: group 1's descriptor has a wrong checksum" {
	corpus f_group_desc_csum
}

@test "f_group_desc_location: group 2's descriptor puts its inode table in the wrong place" {
	corpus f_group_desc_location
}

@test "f_group_dirs: group 0's directory count is wrong" {
	corpus f_group_dirs
}

@test "f_ind_loop: a double indirect block whose first two pointers name itself" {
	corpus f_ind_loop
}

@test "f_inode_csum: an inode's checksum does not match" {
	corpus f_inode_csum
}

@test "f_inodes_leaked: inodes marked in use that are free" {
	corpus f_inodes_leaked
}

@test "f_inodes_unmarked: an inode in use marked free" {
	corpus f_inodes_unmarked
}

@test "f_itable_zeroed: the first block of the inode table: inodes 1 to 4, the root among them" {
	corpus f_itable_zeroed
}

@test "f_lost_found_not_dir: /lost+found is a file: unlinked, made anew, and what it named connected to it" {
	corpus f_lost_found_not_dir
}

@test "f_links_high: a link count too high" {
	corpus f_links_high
}

@test "f_links_low: a link count too low" {
	corpus f_links_low
}

@test "f_no_dot: a directory's '.' is renamed" {
	corpus f_no_dot
}

@test "f_no_dotdot: a directory's '..' is renamed" {
	corpus f_no_dotdot
}

@test "f_noroot: the root inode is zeroed" {
	corpus f_noroot
}

@test "f_reserved_inode: the reserved inode 1 is not zero" {
	corpus f_reserved_inode
}

@test "f_sb_counts: the superblock's free counts are wrong" {
	corpus f_sb_counts
}

@test "f_sb_csum_no_backup: a single group has no backup: a superblock whose checksum alone is bad is sealed again" {
	corpus f_sb_csum_no_backup
}

@test "f_sb_features_compat: a compatible feature no version knows" {
	corpus f_sb_features_compat
}

@test "f_sb_flags: a superblock flag this version does not know" {
	corpus f_sb_flags
}

@test "f_sb_every_copy_csum: the primary superblock is zeroed and both backups lose their checksum: a backup whose checksum alone is bad is used" {
	corpus f_sb_every_copy_csum
}

@test "f_sb_geometry: the primary superblock claims more blocks than the image has" {
	corpus f_sb_geometry
}

@test "f_sb_group_nonzero: the primary superblock says it is the copy of group 3" {
	corpus f_sb_group_nonzero
}

@test "f_sb_primary_and_backup_bad: the primary superblock and the backup in group 3 are both zeroed: the backup in group 1 is used" {
	corpus f_sb_primary_and_backup_bad
}

@test "f_sb_primary_and_group1_bad: the primary superblock and the backup in group 1 are both zeroed, in a geometry where only a search of group 3 finds its backup: that backup is used" {
	corpus f_sb_primary_and_group1_bad
}

@test "f_sb_primary_bad: the primary superblock loses its magic number: the backup in group 1 is used" {
	corpus f_sb_primary_bad
}

@test "f_sb_primary_csum: the primary superblock's checksum is wrong: the backup in group 1 is used" {
	corpus f_sb_primary_csum
}

@test "f_sb_primary_zeroed: the block of the primary superblock is all zeros" {
	corpus f_sb_primary_zeroed
}

@test "f_sb_state: state bits other than 'clean'" {
	corpus f_sb_state
}

@test "f_snap_slot: a snapshot slot names a directory" {
	corpus f_snap_slot
}

@test "f_snap_slot_dup: two snapshot slots name one file" {
	corpus f_snap_slot_dup
}

@test "f_special_data: a fifo with a size and a device node with a block pointer" {
	corpus f_special_data
}

@test "f_symlink_bad_block: a slow symbolic link whose block points into the inode table" {
	corpus f_symlink_bad_block
}

@test "f_symlink_empty: a fast symbolic link of size 0" {
	corpus f_symlink_empty
}

@test "f_symlink_nul: a fast symbolic link longer than its target: NULs in the target" {
	corpus f_symlink_nul
}

@test "f_symlink_slow_nul: a slow symbolic link whose block is zeros" {
	corpus f_symlink_slow_nul
}

@test "f_symlink_slow_tail: a slow symbolic link whose block holds bytes after its target" {
	corpus f_symlink_slow_tail
}

@test "f_symlink_fast_blocks: a fast symbolic link that counts a block" {
	corpus f_symlink_fast_blocks
}

@test "f_symlink_no_block: a slow symbolic link without its block" {
	corpus f_symlink_no_block
}

@test "f_symlink_too_long: a slow symbolic link whose size is past its one block" {
	corpus f_symlink_too_long
}

@test "f_unattached: a file with data loses its name: it goes to /lost+found" {
	corpus f_unattached
}

@test "f_unattached_clear: a file removed (link count 0, no name) whose freeing never happened" {
	corpus f_unattached_clear
}

@test "f_unattached_empty: an empty file loses its name" {
	corpus f_unattached_empty
}

@test "f_zero_mode: an inode in use has mode 0" {
	corpus f_zero_mode
}

@test "f_snap_orphan: a crash while a snapshot was taken leaves its file and no slot: a leak, removed" {
	corpus f_snap_orphan
}

@test "f_snap_flag: a file of two names with the snapshot flag and no slot keeps its names and loses the flag" {
	corpus f_snap_flag
}

@test "f_xattr_inline: the attributes in an inode name a namespace that does not exist" {
	corpus f_xattr_inline
}

@test "f_xattr_bad_block: an attribute block pointer points into the metadata" {
	corpus f_xattr_bad_block
}

@test "f_xattr_block_corrupt: an attribute block's entry has an unknown namespace" {
	corpus f_xattr_block_corrupt
}

@test "f_xattr_out_of_order: an attribute block's entries are out of order" {
	corpus f_xattr_out_of_order
}

@test "f_xattr_out_of_bounds: an attribute block's entry runs past the block" {
	corpus f_xattr_out_of_bounds
}

@test "f_xattr_csum: an attribute block's checksum does not match its sound entries" {
	corpus f_xattr_csum
}

@test "f_xattr_refcount: an attribute block counts two inodes" {
	corpus f_xattr_refcount
}

@test "f_xattr_dup: two inodes name one attribute block: the second gets a copy" {
	corpus f_xattr_dup
}

@test "f_xattr_data_block: an inode names another file's data block as its attribute block" {
	corpus f_xattr_data_block
}

@test "f_xattr_leaked: an attribute block nothing names: a leak, freed" {
	corpus f_xattr_leaked
}

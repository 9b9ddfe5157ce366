/*
 * sufs-fuse.h - what the files of the daemon share.
 *
 * One struct mount holds the daemon's state.  The rule that makes the
 * threads safe is the library's: every libsufs call, and every use of the
 * kernel's references (nodes.c), is made under sufs_lock(mount->fs).  The
 * threads are the session loop's workers (ops.c, io.c, dir.c), the
 * write-back timer and the control channel with its checks (main.c,
 * ctl.c); only the background check, which takes the lock itself where it
 * needs it, runs without it.
 */
#ifndef SUFS_FUSE_H
#define SUFS_FUSE_H

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)

#include <sufs.h>

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* ---- the kernel's references (nodes.c) ------------------------------------- */

/*
 * How many times the kernel has been told of each inode (its lookup
 * count): every reply that hands it an inode (lookup, create, mknod,
 * mkdir, symlink, link, each entry of readdirplus) adds one, and forget
 * takes away what it says.  While the count is above zero the inode is
 * held (sufs_hold): a file unlinked while a program has it open, or while
 * the kernel still caches it, keeps its inode and blocks, and its number
 * is not given to another file that the kernel would then confuse with
 * it.  A page of counters per 4,096 inode numbers, made on first use.
 */
struct nodes {
	uint64_t **pages;
	uint32_t npages;
	uint64_t known;            /* inodes with a count above zero */
};

int nodes_init(struct nodes *n, uint32_t inodes_count);
void nodes_free(struct nodes *n);
/* The kernel was told of ino once more: the first time, hold it.
 * Under the lock. */
int nodes_ref(struct nodes *n, struct sufs_fs *fs, uint32_t ino);
/* The kernel forgets count references to ino: at zero, release it. */
void nodes_forget(struct nodes *n, struct sufs_fs *fs, uint32_t ino, uint64_t count);
/* Whether the kernel knows ino (its count is above zero). */
int nodes_known(const struct nodes *n, uint32_t ino);

/* ---- the daemon ------------------------------------------------------------- */

struct mount {
	struct sufs_fs *fs;
	struct fuse_session *se;
	const char *image;         /* as given on the command line */
	char *mountpoint;          /* absolute */
	int readonly;
	int direct;                /* -o direct: the image opened with O_DIRECT */
	unsigned mode;             /* the write mode asked for */
	double timeout;            /* how long the kernel may cache names and attributes */
	uint32_t block_size;
	struct nodes nodes;
	atomic_uint snapdir;       /* /.snap's inode, once looked up: never cached */
	atomic_int stopping;       /* the session is ending: threads leave */
	int foreground;            /* messages on stderr, else to syslog */
	int acl;                   /* POSIX ACLs: asked for (-o noacl: not), then
	                              what the kernel agreed to (op_init) */
	int bgcheck;               /* run the background check at mount */
	uint32_t throttle_kib;     /* its pace (0: as fast as it goes) */
	unsigned dirty_percent, age_seconds;
	/* threads */
	pthread_t writeback;
	pthread_mutex_t wake_lock;
	pthread_cond_t wake;       /* stopping was set */
	int writeback_started;
	struct ctl_server *ctl;    /* ctl.c */
};

/* The operations for fuse_session_new() (ops.c, with io.c and dir.c). */
extern const struct fuse_lowlevel_ops sufs_fuse_ops;

/* A message from the daemon: on stderr in the foreground, to syslog once
 * it runs in the background.  level is syslog's (LOG_ERR, LOG_WARNING,
 * LOG_INFO). */
void note(struct mount *m, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- shared by ops.c, io.c and dir.c ------------------------------------------ */

/* FUSE's root is nodeid 1; sufs's root inode is 2 (inode 1 is never used). */
static inline uint32_t ino_of(fuse_ino_t node)
{
	return node == FUSE_ROOT_ID ? SUFS_ROOT_INO : (uint32_t)node;
}

static inline fuse_ino_t node_of(uint32_t ino)
{
	return ino == SUFS_ROOT_INO ? FUSE_ROOT_ID : ino;
}

static inline struct mount *mount_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* A library return code as the errno the kernel gets (positive; 0 for
 * success).  The library's own codes are damage (EUCLEAN, EBADMSG) or
 * EIO, each logged with what was being done to which inode. */
int fuse_errno(struct mount *m, int rc, const char *what, uint32_t ino);
/* The attributes of a struct sufs_stat as the kernel wants them. */
void attr_of(struct mount *m, const struct sufs_stat *s, struct stat *st);
/* Fill e for ino and count the reference (under the lock): 0 or an errno. */
int entry_of(struct mount *m, uint32_t dir, uint32_t ino, struct fuse_entry_param *e);
/* Reply with e; a reply the kernel did not take gives its reference back. */
void reply_entry(fuse_req_t req, const struct fuse_entry_param *e);

/* Make an inode durable, with the names that reach it (fsync, fsyncdir);
 * under the lock. */
int sync_inode(struct mount *m, uint32_t ino);

/* io.c and dir.c: the file and directory operations of sufs_fuse_ops */
void op_open(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi);
void op_read(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
	     struct fuse_file_info *fi);
void op_write(fuse_req_t req, fuse_ino_t node, const char *buf, size_t size, off_t off,
	      struct fuse_file_info *fi);
void op_release(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi);
void op_fsync(fuse_req_t req, fuse_ino_t node, int datasync, struct fuse_file_info *fi);
void op_fallocate(fuse_req_t req, fuse_ino_t node, int mode, off_t off, off_t len,
		  struct fuse_file_info *fi);
void op_lseek(fuse_req_t req, fuse_ino_t node, off_t off, int whence,
	      struct fuse_file_info *fi);
void op_opendir(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi);
void op_readdir(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
		struct fuse_file_info *fi);
void op_readdirplus(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
		    struct fuse_file_info *fi);
void op_releasedir(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi);
void op_fsyncdir(fuse_req_t req, fuse_ino_t node, int datasync, struct fuse_file_info *fi);
/* xattr.c: the extended attributes' operations */
void op_getxattr(fuse_req_t req, fuse_ino_t node, const char *name, size_t size);
void op_listxattr(fuse_req_t req, fuse_ino_t node, size_t size);
void op_setxattr(fuse_req_t req, fuse_ino_t node, const char *name, const char *value,
		 size_t size, int flags);
void op_removexattr(fuse_req_t req, fuse_ino_t node, const char *name);

#endif

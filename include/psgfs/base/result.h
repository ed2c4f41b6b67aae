/* One result enum for every layer below FUSE. Only src/fuse maps these to errno. */
#ifndef PSGFS_RESULT_H
#define PSGFS_RESULT_H

enum rc {
	RC_OK = 0,
	RC_TRUNCATED,	/* input ends before a structure does */
	RC_BOUNDS,	/* an offset, size, count or index points outside its container */
	RC_FORMAT,	/* not a recognised format (bad magic) */
	RC_CORRUPT,	/* recognised, but inconsistent beyond repair */
	RC_UNSUPPORTED, /* valid but a variant we do not decode */
	RC_NOMEM,	/* allocation failed or would exceed what the input could hold */
	RC_IO,		/* the source could not be read (pread failed or came up short) */
	RC_NOENT,	/* tree: no such name */
	RC_NOTDIR,	/* tree: not a directory */
	RC_ISDIR,	/* tree: is a directory */
	RC_INVAL,	/* bad argument from the caller; a picture refused by texture mods */
	RC_READONLY,	/* tree: this file or folder is not writable */
	RC_NOSPACE,	/* tree: no room to write (disk full, too many files being written) */
	RC_TOOBIG,	/* tree: a file written past its size limit */
	RC_EXISTS,	/* tree: the name is taken */
	RC_DENIED,	/* tree: not permitted (texture mods: a new texture, a picture's mode) */
	RC_NOFILES,	/* out of file descriptors (EMFILE, ENFILE): a passing condition */
};

/* Short, lower-case, static description ("truncated", "out of bounds", ...). */
const char *rc_str(enum rc r);

#include <stddef.h>

/* Say why in why (printf-style; nothing when why is NULL or whylen 0) and return r. */
enum rc rc_fail(char *why, size_t whylen, enum rc r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif

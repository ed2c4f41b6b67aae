/* One result enum for every layer below FUSE. Only src/fuse maps these to errno. */
#ifndef PSGFS_RESULT_H
#define PSGFS_RESULT_H

enum psg_result {
	PSG_OK = 0,
	PSG_ERR_TRUNCATED,   /* input ends before a structure does */
	PSG_ERR_BOUNDS,	     /* an offset, size, count or index points outside its container */
	PSG_ERR_FORMAT,	     /* not a recognised format (bad magic) */
	PSG_ERR_CORRUPT,     /* recognised, but inconsistent beyond repair */
	PSG_ERR_UNSUPPORTED, /* valid but a variant we do not decode */
	PSG_ERR_NOMEM,	     /* allocation failed or would exceed what the input could hold */
	PSG_ERR_IO,	     /* the source could not be read (pread failed or came up short) */
	PSG_ERR_NOENT,	     /* tree: no such name */
	PSG_ERR_NOTDIR,	     /* tree: not a directory */
	PSG_ERR_ISDIR,	     /* tree: is a directory */
	PSG_ERR_INVAL,	     /* bad argument from the caller */
};

/* Short, lower-case, static description ("truncated", "out of bounds", ...). */
const char *psg_result_str(enum psg_result r);

#endif

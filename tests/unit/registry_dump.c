/* Print the format registry (registry.h), one row a line, for scripts/readme-registry:
 * role, name, smallest size, extensions, companion extensions (tab-separated; lists
 * space-separated, "-" when empty). */
#include <stdio.h>

#include "psgfs/formats/registry.h"

static void put_list(const char *const *v)
{
	if (!v || !*v) {
		fputs("-", stdout);
		return;
	}
	for (unsigned i = 0; v[i]; i++)
		printf("%s%s", i ? " " : "", v[i]);
}

int main(void)
{
	static const char *const role[] = {
	    [FMT_ASSET] = "asset", [FMT_ARCHIVE] = "archive", [FMT_FILE] = "file"};

	for (unsigned i = 0; i < FMT_COUNT; i++) {
		const struct fmt_row *r = fmt_row((enum fmt_id)i);

		printf("%s\t%s\t%u\t", role[r->role], r->name, (unsigned)r->min_size);
		put_list(r->exts);
		putchar('\t');
		put_list(r->companion_exts);
		putchar('\n');
	}
	return 0;
}

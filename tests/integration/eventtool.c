/* eventtool.c: writes events with common/event.c's writer, as an agent would, for tests of `mtsctl events`: eventtool DIR MAX_BYTES TYPE [SERVICE [TASK [NODE [MESSAGE]]]] [xCOUNT]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "log.h"

int
main(int argc, char **argv)
{
	struct mts_event ev = { 0 };
	struct mts_event_log *l;
	long count = 1, i;

	if (argc < 4) {
		fprintf(stderr,
		    "usage: eventtool DIR MAX_BYTES TYPE [SERVICE "
		    "[TASK [NODE [MESSAGE]]]] [xCOUNT]\n");
		return 2;
	}
	log_init("eventtool", MTS_LOG_WARN);
	if (argv[argc - 1][0] == 'x' && argc > 4)
		count = strtol(argv[--argc] + 1, NULL, 10);
	ev.type = argv[3];
	ev.service = argc > 4 ? argv[4] : NULL;
	ev.task = argc > 5 ? argv[5] : NULL;
	ev.node = argc > 6 ? argv[6] : NULL;
	ev.message = argc > 7 ? argv[7] : NULL;
	if ((l = mts_event_log_open(argv[1], strtoul(argv[2], NULL, 10),
	         "node-1",
	         strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1
	                               : argv[1])) == NULL)
		return 1;
	for (i = 0; i < count; i++)
		if (mts_event_emit(l, &ev) != 0) {
			mts_event_log_close(l);
			return 1;
		}
	mts_event_log_close(l);
	return 0;
}

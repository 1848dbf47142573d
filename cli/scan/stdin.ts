/**
 * Standard input as `scan -` reads it, so that it can neither hang the scan nor be mistaken for an empty manifest:
 * - a pipe or socket (`helm template chart | scan -`) is read to its end, waiting for the writer as `cat` would;
 * - a regular file (`scan - < pod.yaml`) is read as a named file is: under the caps, opened anew without blocking
 *   (`/proc/self/fd/<n>`), so a regular-looking file that would block (`scan - < /proc/kmsg`) is refused;
 * - a terminal, or any other device, is refused: a terminal would wait for typing, a device may never end.
 */
import { closeSync, constants, existsSync, fstatSync, openSync } from "node:fs";
import { isatty } from "node:tty";
import { formatBytes, InputRefused, kindOf, type ReadFn, readCapped } from "./files";

/** The bytes of standard input (descriptor `fd`), at most `max`; throws {@link InputRefused} with the reason. */
export function readStandardInput(max: number, fd = 0, read?: ReadFn): Uint8Array {
  const over = (): never => {
    throw new InputRefused(`is over the total input limit of ${formatBytes(max)} (--max-total-size)`);
  };
  const st = fstatSync(fd);
  if (st.isFIFO() || st.isSocket()) return readCapped(fd, max, true, read) ?? over();
  if (st.isFile()) {
    if (st.size > max) over();
    const again = `/proc/self/fd/${fd}`;
    if (!existsSync(again)) return readCapped(fd, max, false, read) ?? over();
    // O_NONBLOCK on a descriptor of our own: the shell's one may be shared, and blocks.
    const own = openSync(again, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    try {
      return readCapped(own, max, false, read) ?? over();
    } finally {
      closeSync(own);
    }
  }
  if (isatty(fd))
    throw new InputRefused(
      "is a terminal, which would wait for typing; pipe or redirect the input (helm template chart | scan -, scan - < file)",
    );
  throw new InputRefused(`is ${kindOf(st)}, not a pipe or a regular file; not read`);
}

/**
 * The I/O shell's shared pieces: what the socket tells its shell (ShellConfig), how the shell
 * reports failures without naming the API's exceptions (Failure), addresses, and the testing
 * package's hook. Internal use only: not exported by the module io.homa, and no API on the class
 * path either; the API is package io.homa.
 */
package io.homa.internal;

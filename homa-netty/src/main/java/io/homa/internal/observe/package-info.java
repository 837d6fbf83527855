/**
 * What the shell counts and records: the shell's counters (ShellCounter), the metrics snapshot it
 * hands the API, and the JDK Flight Recorder events. Internal use only.
 */
package io.homa.internal.observe;

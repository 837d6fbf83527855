/**
 * The Homa protocol as a sans-IO engine, its wire format and a simulated network. Not an API for
 * applications: its packages are exported to the I/O shell (module {@code io.homa}) only, whose
 * package {@code io.homa} is the public API. Benchmarks and tools that drive the engine directly
 * use the class path, where this descriptor does not apply.
 */
module io.homa.core {
    // io.homa.collective (an automatic module) runs its schedules on the simulated hosts: its
    // package io.homa.collective.sim drives engines and reads their events.
    exports io.homa.core to io.homa, io.homa.collective;
    exports io.homa.core.wire to io.homa;
    exports io.homa.core.psp to io.homa;
    // FaultModel: the shell's fault injector (io.homa.testing) draws from it; the collectives'
    // simulation driver builds networks of it.
    exports io.homa.core.sim to io.homa, io.homa.collective;
}

package io.homa.collective.sim;

import io.homa.collective.CollectiveGroup;
import io.homa.collective.CollectiveOptions;
import io.homa.collective.internal.Group;
import io.homa.core.sim.Datacenter;
import io.homa.core.sim.DatacenterHost;
import io.homa.core.sim.SimHost;
import io.homa.core.sim.SimNetwork;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Collective groups on simulated hosts, each rank a host running the real Homa engine: the same
 * schedules and execution as over sockets, in deterministic virtual time. Everything, the groups'
 * futures included, runs on the thread that runs the simulation; run it (e.g.
 * {@code SimNetwork.runUntil}) until the futures are done.
 *
 * <p>This driver reads the engines' events directly, which is why homa-core exports
 * {@code io.homa.core} and {@code io.homa.core.sim} to module {@code io.homa.collective} (and to
 * the shell, {@code io.homa}) and to no one else.
 */
public final class SimCollectives {
    private SimCollectives() {
    }

    /**
     * One group rank per host of a single-switch {@link SimNetwork} (rank i on {@code hosts.get(i)}),
     * with real payloads (for tests: loss, reordering and duplicates come from the network's settings).
     */
    public static List<CollectiveGroup> on(SimNetwork net, List<SimHost> hosts, CollectiveOptions options) {
        InetSocketAddress[] members = hosts.stream().map(SimHost::address).toArray(InetSocketAddress[]::new);
        Group.check(java.util.Arrays.asList(members), 0, options);
        SimLink.Clock clock = new SimLink.Clock() {
            @Override
            public long now() {
                return net.now();
            }

            @Override
            public void schedule(long at, Runnable task) {
                net.schedule(at, task);
            }
        };
        List<CollectiveGroup> groups = new ArrayList<>();
        for (int r = 0; r < hosts.size(); r++) {
            SimHost h = hosts.get(r);
            SimLink.Host host = new SimLink.Host() {
                @Override
                public long call(InetSocketAddress server, ByteBuffer request) {
                    byte[] bytes = new byte[request.remaining()];
                    request.get(bytes);
                    return h.call(server, bytes);
                }

                @Override
                public void respond(InetSocketAddress client, long rpcId, ByteBuffer response) {
                    byte[] bytes = new byte[response.remaining()];
                    response.duplicate().get(bytes);
                    h.respond(client, rpcId, bytes);
                }

                @Override
                public void onEvent(java.util.function.Consumer<io.homa.core.EngineEvent> handler) {
                    h.onEvent(handler);
                }

                @Override
                public java.util.function.Consumer<io.homa.core.EngineEvent> previousHandler() {
                    return e -> { // SimHost has no other driver here: drop the message
                        if (e.message() != null) {
                            e.message().release();
                        }
                    };
                }
            };
            groups.add(new Group(new SimLink(host, clock, members, false), members.length, r, options));
        }
        return groups;
    }

    /**
     * One group rank per listed host of a {@link Datacenter} (rank i on host {@code hosts[i]}).
     * Events that are not the group's (another driver's RPCs on the same hosts, such as a
     * {@code DatacenterWorkload} created before the groups) go on to the handler the host had. With
     * {@code synthetic}, messages are read for their headers only: run it with
     * {@code CollectiveBuffer.synthetic} buffers, whose elements are lengths without data.
     */
    public static List<CollectiveGroup> on(Datacenter dc, int[] hosts, CollectiveOptions options, boolean synthetic) {
        InetSocketAddress[] members = new InetSocketAddress[hosts.length];
        for (int i = 0; i < hosts.length; i++) {
            members[i] = dc.host(hosts[i]).address();
        }
        Group.check(java.util.Arrays.asList(members), 0, options);
        SimLink.Clock clock = new SimLink.Clock() {
            @Override
            public long now() {
                return dc.now();
            }

            @Override
            public void schedule(long at, Runnable task) {
                dc.schedule(at, task);
            }
        };
        List<CollectiveGroup> groups = new ArrayList<>();
        for (int r = 0; r < hosts.length; r++) {
            DatacenterHost h = dc.host(hosts[r]);
            SimLink.Host host = new SimLink.Host() {
                @Override
                public long call(InetSocketAddress server, ByteBuffer request) {
                    return h.call(server, request);
                }

                @Override
                public void respond(InetSocketAddress client, long rpcId, ByteBuffer response) {
                    h.respond(client, rpcId, response);
                }

                @Override
                public void onEvent(java.util.function.Consumer<io.homa.core.EngineEvent> handler) {
                    h.onEvent(handler);
                }

                @Override
                public java.util.function.Consumer<io.homa.core.EngineEvent> previousHandler() {
                    return h.handler();
                }
            };
            groups.add(new Group(new SimLink(host, clock, members, synthetic), members.length, r, options));
        }
        return groups;
    }
}

"""The verb handlers of the resource API: one module per verb, as upstream's endpoint handlers.

:mod:`.scope` holds what they share (the parsed URL and the server's state), :mod:`.request`
how they read a request; :mod:`.get` (get and list), :mod:`.watch`, :mod:`.create`,
:mod:`.update` (and the scale subresource), :mod:`.patch` (and server-side apply) and
:mod:`.delete` (and propagation to dependents) answer. The server routes to them.
"""

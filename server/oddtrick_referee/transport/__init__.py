"""How bots reach the referee: the gRPC bridge into trio and the session lobby."""

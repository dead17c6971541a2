return { t = { match = {"tool"}, filesystem = { write = {"a"} }, hook = function(ctx, plan) scudo.fs.write("b") scudo.unit.set("MemoryMax", "1G") scudo.net.allow("x.org:443") scudo.warn("w") end } }

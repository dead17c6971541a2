return { t = { match = {"tool"}, hook = function() while true do pcall(function() while true do end end) end end } }

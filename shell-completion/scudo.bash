# SPDX-License-Identifier: MIT OR Apache-2.0
# bash completion for scudo(1): subcommands, options, profile and property names, paths for
# the path options, and the confined command's own completion after its name.

_scudo_profiles() {
    scudo profiles 2>/dev/null | awk '/^[^ \t]/ {print $1}'
}

_scudo_properties() {
    scudo explain --list-properties 2>/dev/null | awk '{print $1 "="}'
}

_scudo() {
    local cur prev words cword
    _init_completion -n = || return

    local verbs="explain check profiles trust untrust trusted link unlink suggest doctor shim status"
    local run_opts="--profile --no-match --fs-write --fs-read --fs-hide --fs-deny --net-allow --net-deny
        --no-network --env --deny-env --allow-env --property --pty --no-pty --tui --report-json
        --delegate --no-delegate --dry-run --quiet --verbose --help --version"

    case $prev in
        -p|--profile)
            COMPREPLY=($(compgen -W "$(_scudo_profiles)" -- "$cur")); return ;;
        --fs-write|--fs-read|--fs-hide|--fs-deny|--report-json|--dir)
            _filedir; return ;;
        --property)
            compopt -o nospace
            COMPREPLY=($(compgen -W "$(_scudo_properties)" -- "$cur")); return ;;
        --env)
            COMPREPLY=($(compgen -e -- "$cur")); return ;;
        --net-allow|--net-deny|--deny-env|--allow-env)
            return ;;
    esac

    # the first word that is not an option (or an option's value) is a subcommand or the command
    local i verb= takes_value="-p --profile --fs-write --fs-read --fs-hide --fs-deny --net-allow --net-deny
        --env --deny-env --allow-env --property --report-json --dir"
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --) verb=--; break ;;
            -*) [[ " $takes_value " == *" ${words[i]} "* ]] && ((i++)) ;;
            *) verb=${words[i]}; break ;;
        esac
    done

    case $verb in
        '')
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$run_opts" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "$verbs" -- "$cur") $(compgen -c -- "$cur"))
            fi ;;
        --)
            _command_offset $((i + 1)) ;;
        explain)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--json --list-properties $run_opts" -- "$cur"))
            else
                _command_offset $((i + 1))
            fi ;;
        check|trust|untrust|suggest)
            [[ $verb == trust && $cur == -* ]] && COMPREPLY=($(compgen -W "--yes --help" -- "$cur")) || _filedir ;;
        link|unlink)
            [[ $cur == -* ]] && COMPREPLY=($(compgen -W "--dir --help" -- "$cur")) ||
                COMPREPLY=($(compgen -c -- "$cur")) ;;
        doctor)
            COMPREPLY=($(compgen -W "--json --no-probe --help" -- "$cur")) ;;
        shim)
            [[ $prev == --print-env ]] && COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")) ||
                COMPREPLY=($(compgen -W "--print-path --print-env --mountpoint --verbose --help" -- "$cur")) ;;
        status)
            [[ $cur == -* ]] && COMPREPLY=($(compgen -W "--json --help" -- "$cur")) ||
                COMPREPLY=($(compgen -c -- "$cur")) ;;
        profiles|trusted)
            COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
        *)
            # a command: its own completion
            _command_offset $i ;;
    esac
}
complete -F _scudo scudo

# SPDX-License-Identifier: MIT OR Apache-2.0
# fish completion for scudo(1).

set -l verbs explain check profiles trust untrust trusted link unlink suggest doctor shim status

function __scudo_no_command
    # true until a subcommand or a command has been given
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    for t in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case -p --profile --fs-write --fs-read --fs-hide --fs-deny --net-allow --net-deny --env --deny-env --allow-env --property --report-json
                set skip 1
            case '-*'
            case '*'
                return 1
        end
    end
    return 0
end

function __scudo_profiles
    scudo profiles 2>/dev/null | string match -r '^[^ \t]\S*' 
end

function __scudo_properties
    scudo explain --list-properties 2>/dev/null | string replace -r '^(\S+).*' '$1='
end

complete -c scudo -f
complete -c scudo -n __scudo_no_command -a "$verbs" -d subcommand
complete -c scudo -n __scudo_no_command -a '(__fish_complete_command)'
complete -c scudo -n 'not __scudo_no_command; and not __fish_seen_subcommand_from explain check profiles trust untrust trusted link unlink suggest doctor shim status' -a '(__fish_complete_subcommand)'
complete -c scudo -n '__fish_seen_subcommand_from explain' -a '(__fish_complete_subcommand --fcs-skip=2)'
complete -c scudo -n '__fish_seen_subcommand_from explain' -l json -d 'as JSON'
complete -c scudo -n '__fish_seen_subcommand_from explain' -l list-properties -d 'the unit properties'
complete -c scudo -n '__fish_seen_subcommand_from check trust untrust suggest' -F
complete -c scudo -n '__fish_seen_subcommand_from trust' -s y -l yes -d 'trust without asking'
complete -c scudo -n '__fish_seen_subcommand_from link unlink' -l dir -r -F -d 'the directory'
complete -c scudo -n '__fish_seen_subcommand_from doctor' -l json -d 'as JSON'
complete -c scudo -n '__fish_seen_subcommand_from doctor' -l no-probe -d 'the host checks alone'
complete -c scudo -n '__fish_seen_subcommand_from shim' -l print-path -d 'print the directory'
complete -c scudo -n '__fish_seen_subcommand_from shim' -l print-env -x -a 'bash zsh fish' -d 'the PATH line'
complete -c scudo -n '__fish_seen_subcommand_from shim' -l mountpoint -r -F -d 'mount it at DIR'
complete -c scudo -n '__fish_seen_subcommand_from status' -l json -d 'as JSON'
complete -c scudo -n '__fish_seen_subcommand_from status' -a '(__fish_complete_command)'
complete -c scudo -n __scudo_no_command -s p -l profile -x -a '(__scudo_profiles)' -d 'apply profile NAME too'
complete -c scudo -n __scudo_no_command -s P -l no-match -d 'apply only the --profile ones'
complete -c scudo -n __scudo_no_command -l fs-write -r -F -d 'make PATH writable'
complete -c scudo -n __scudo_no_command -l fs-read -r -F -d 'make PATH readable'
complete -c scudo -n __scudo_no_command -l fs-hide -r -F -d 'replace PATH by an empty one'
complete -c scudo -n __scudo_no_command -l fs-deny -r -F -d 'make PATH inaccessible'
complete -c scudo -n __scudo_no_command -l net-allow -x -d 'allow reaching RULE'
complete -c scudo -n __scudo_no_command -l net-deny -x -d 'refuse RULE'
complete -c scudo -n __scudo_no_command -l no-network -d 'no network at all'
complete -c scudo -n __scudo_no_command -l env -x -a '(set -xn)' -d 'pass variable NAME'
complete -c scudo -n __scudo_no_command -l deny-env -x -d 'remove matching variables'
complete -c scudo -n __scudo_no_command -l allow-env -x -d 'keep matching variables'
complete -c scudo -n __scudo_no_command -l property -x -a '(__scudo_properties)' -d 'set a unit property'
complete -c scudo -n __scudo_no_command -s t -l pty -d 'stdout on the pseudo-terminal too'
complete -c scudo -n __scudo_no_command -s T -l no-pty -d 'never use a pseudo-terminal'
complete -c scudo -n __scudo_no_command -l tui -d 'the command in a terminal UI'
complete -c scudo -n __scudo_no_command -l report-json -r -F -d 'write the refusal reports to FILE'
complete -c scudo -n __scudo_no_command -l delegate -d 'delegate every delegable profile'
complete -c scudo -n __scudo_no_command -l no-delegate -d 'delegate nothing'
complete -c scudo -n __scudo_no_command -l dry-run -d 'print what would be started'
complete -c scudo -n __scudo_no_command -s q -l quiet -d 'fewer messages'
complete -c scudo -n __scudo_no_command -s v -l verbose -d 'more messages'
complete -c scudo -n __scudo_no_command -s h -l help -d help
complete -c scudo -n __scudo_no_command -l version -d 'the version'

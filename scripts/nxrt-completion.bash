# Bash completion for nxrt: subcommands, flags, flag values (--format, --ep...) and model files.
# Flags are read from `nxrt SUBCOMMAND --help` once per shell, so they follow the binary.
# Installed by `cmake --install` as share/bash-completion/completions/nxrt; or: source this file.

declare -gA _nxrt_help_cache

# The --help text of `$1 $2` (the nxrt binary and a subcommand, or none), cached.
_nxrt_help() {
  local key="$1 $2"
  if [[ -z "${_nxrt_help_cache[$key]+set}" ]]; then
    _nxrt_help_cache[$key]=$("$1" ${2:+"$2"} --help 2>/dev/null)
  fi
  printf '%s\n' "${_nxrt_help_cache[$key]}"
}

# Subcommand names from the top-level help.
_nxrt_subcommands() {
  _nxrt_help "$1" "" | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'
}

# Every flag of a subcommand (or of nxrt itself), one per line.
_nxrt_flags() {
  _nxrt_help "$1" "$2" | awk '/^Options:/ { on = 1; next } /^[A-Z]/ { on = 0 } on && /^  -/ {
    n = split($1, names, ","); for (i = 1; i <= n; ++i) print names[i] }'
}

# The help line of one flag ("  --format TEXT:{text,json}=text"), empty when it takes no value.
_nxrt_flag_line() {
  _nxrt_help "$1" "$2" | awk -v flag="$3" '/^  -/ {
    n = split($1, names, ","); for (i = 1; i <= n; ++i) if (names[i] == flag && $0 ~ /^  [^ ]+ [^ ]/) print }'
}

_nxrt() {
  local cmd="${COMP_WORDS[0]}" cur="${COMP_WORDS[COMP_CWORD]}" prev="" sub="" i
  ((COMP_CWORD > 0)) && prev="${COMP_WORDS[COMP_CWORD - 1]}"
  for ((i = 1; i < COMP_CWORD; ++i)); do
    if [[ "${COMP_WORDS[i]}" != -* ]]; then
      sub="${COMP_WORDS[i]}"
      break
    fi
  done
  COMPREPLY=()
  if [[ -z "$sub" ]]; then
    if [[ "$cur" == -* ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$(_nxrt_flags "$cmd" "")" -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -W "$(_nxrt_subcommands "$cmd")" -- "$cur")
    fi
    return 0
  fi

  # Bash splits "NAME=FILE" at "=" (COMP_WORDBREAKS): after "x=" complete a file.
  local at_value=""
  if [[ "$cur" == "=" ]] && ((COMP_CWORD >= 3)); then
    at_value="${COMP_WORDS[COMP_CWORD - 2]}" cur=""
  elif [[ "$prev" == "=" ]] && ((COMP_CWORD >= 3)); then
    at_value="${COMP_WORDS[COMP_CWORD - 3]}"
  fi
  if [[ -n "$at_value" && "$(_nxrt_flag_line "$cmd" "$sub" "$at_value")" == *=FILE* ]]; then
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    return 0
  fi

  if [[ "$prev" == -* ]]; then
    local line
    line=$(_nxrt_flag_line "$cmd" "$sub" "$prev")
    if [[ -n "$line" ]]; then
      if [[ "$line" =~ \{([^}]*)\} ]]; then
        mapfile -t COMPREPLY < <(compgen -W "${BASH_REMATCH[1]//,/ }" -- "$cur")
      elif [[ "$prev" == --ep ]]; then
        # A comma list: complete the last name, keeping those before it.
        local done_part="" last="$cur" eps
        [[ "$cur" == *,* ]] && done_part="${cur%,*}," last="${cur##*,}"
        eps=$("$cmd" --version 2>/dev/null | sed -n 's/^EPs: //p' | tr -d ',')
        mapfile -t COMPREPLY < <(compgen -P "$done_part" -W "$eps" -- "$last")
      elif [[ "$prev" == *-dir ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      elif [[ "$line" == *=FILE* && "$cur" == *=* ]]; then
        # NAME=FILE: complete the file, keeping "NAME=".
        mapfile -t COMPREPLY < <(compgen -P "${cur%%=*}=" -f -- "${cur#*=}")
      elif [[ "$prev" == -o || "$prev" == --output || "$prev" == --trace || "$prev" == --plugin ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      fi
      return 0
    fi
  fi

  if [[ "$cur" == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_nxrt_flags "$cmd" "$sub")" -- "$cur")
    return 0
  fi
  # A positional: .onnx models, and folders to reach them.
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X '!*.onnx' -- "$cur")
  return 0
}

complete -F _nxrt nxrt

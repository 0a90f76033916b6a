"""Local entries: how a bot file or command is started and walled off (the one launcher,
the sandbox, who may read what), and the options it is given.
"""

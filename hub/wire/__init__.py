"""What travels between processes and how it is spelled: codec, channel names, topics, frames."""
